"""Tests for the reference DSL runtime and the regression models in fixtures/targets.

Run as ``python tests/python/test_reference.py`` with any CPython 3.10 to 3.13;
standard library only. The reference package is found through ``lib/data/reference``
relative to this file, the models through ``fixtures/targets``.

Every retention test follows the reads of docs/definitions.md, with the cyclic
collector disabled throughout: (1) is the sentinel's weakref alive once the
workload returned, before any collection; (2) what does one ``DEBUG_SAVEALL``
collection put in ``gc.garbage``; (3) after clearing that, is the sentinel
still alive after a real collection. The models show these tests can fail.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import sys
import tempfile
import types
import unittest
import uuid
import weakref
from pathlib import Path
from typing import Callable, NamedTuple

REPO_ROOT = Path(__file__).resolve().parents[2]
REFERENCE_DIR = REPO_ROOT / "lib" / "data" / "reference"
TARGETS_DIR = REPO_ROOT / "fixtures" / "targets"

if str(REFERENCE_DIR) not in sys.path:
    sys.path.insert(0, str(REFERENCE_DIR))

import leakgate_reference as reference  # noqa: E402

FORMS = ("bare", "options")
KINDS = ("kernel", "jit")
DEPTHS = (1, 2, 3)
MODEL_NAMES = ("frame_cycle_461", "decorator_frame_attr", "temporary_back")


def load_target(name: str) -> types.ModuleType:
    """Load a fixture target by path, as a fresh module each time."""
    path = TARGETS_DIR / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_leakgate_fixture_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_expectations(name: str) -> dict[str, str]:
    """The key=value tokens of a fixture's ``# expect:`` line."""
    for line in (TARGETS_DIR / f"{name}.py").read_text().splitlines():
        if line.startswith("# expect:"):
            tokens = line[len("# expect:") :].split()
            return dict(token.split("=", 1) for token in tokens)
    raise AssertionError(f"{name}.py has no '# expect:' line")


def current_line() -> int:
    """The line of the statement that called this function."""
    return sys._getframe(1).f_lineno


# ---------------------------------------------------------------------------
# Workloads: a frame holding a sentinel, decoration some calls below it.


class Sentinel:
    """A weakref-able local standing in for a large tensor."""

    __slots__ = ("payload", "__weakref__")

    def __init__(self) -> None:
        self.payload = bytearray(1 << 16)


def decorate_once(target: types.ModuleType, kind: str, form: str) -> None:
    """Define one function with ``target.<kind>`` in the given form, then drop it."""
    decorator = getattr(target, kind)
    if form == "bare":

        @decorator
        def user_function():
            return None

    else:
        options = getattr(target, f"{kind}_options", {})

        @decorator(**options)
        def user_function():
            return None


def call_at_depth(action: Callable[[], object], depth: int) -> None:
    if depth <= 1:
        action()
    else:
        call_at_depth(action, depth - 1)


def hold_sentinel_while(action: Callable[[], object], depth: int) -> tuple[weakref.ref, int]:
    sentinel = Sentinel()
    ref = weakref.ref(sentinel)
    call_at_depth(action, depth)
    return ref, id(sentinel)


KERNEL_MODULE_SOURCE = '''\
import leakgate_target

KERNEL_OPTIONS = getattr(leakgate_target, "kernel_options", {})
JIT_OPTIONS = getattr(leakgate_target, "jit_options", {})


@leakgate_target.kernel
def kernel_bare():
    return None


@leakgate_target.kernel(**KERNEL_OPTIONS)
def kernel_with_options():
    return None


@leakgate_target.jit
def jit_bare():
    return None


@leakgate_target.jit(**JIT_OPTIONS)
def jit_with_options():
    return None
'''


class LazyKernelModule:
    """A kernel module in a temp dir that decorates at import time.

    The target is registered as ``leakgate_target`` while the module exists;
    each instance has a unique module name, so the import always runs.
    """

    def __init__(self, target: types.ModuleType) -> None:
        self._target = target
        self._dir = tempfile.TemporaryDirectory()
        self.name = f"_leakgate_kernels_{uuid.uuid4().hex}"
        Path(self._dir.name, f"{self.name}.py").write_text(KERNEL_MODULE_SOURCE)

    def __enter__(self) -> "LazyKernelModule":
        self._saved_target = sys.modules.get("leakgate_target")
        sys.modules["leakgate_target"] = self._target
        sys.path.insert(0, self._dir.name)
        importlib.invalidate_caches()
        return self

    def import_it(self) -> None:
        importlib.import_module(self.name)

    def __exit__(self, *exc_info: object) -> None:
        sys.path.remove(self._dir.name)
        sys.modules.pop(self.name, None)
        if self._saved_target is None:
            sys.modules.pop("leakgate_target", None)
        else:
            sys.modules["leakgate_target"] = self._saved_target
        self._dir.cleanup()


# ---------------------------------------------------------------------------
# Measurement


class Retention(NamedTuple):
    alive_before_collect: bool  # read 1
    sentinel_in_garbage: bool  # read 2, found by identity
    garbage_frames: tuple[str, ...]  # read 2, "name @ file:line"
    alive_after_full_collect: bool  # read 3

    @property
    def verdict(self) -> str:
        if not self.alive_before_collect:
            return "freed-by-refcount"
        if self.alive_after_full_collect:
            return "never-freed"
        return "freed-by-gc-only"


def describe_frame(frame: types.FrameType) -> str:
    # co_name, not co_qualname (3.11+); never f_locals, which changes the graph.
    code = frame.f_code
    return f"{code.co_name} @ {os.path.basename(code.co_filename)}:{frame.f_lineno}"


def measure(workload: Callable[[], tuple[weakref.ref, int]]) -> Retention:
    """Run a workload returning (weakref to sentinel, id of sentinel) and take the three reads."""
    was_enabled = gc.isenabled()
    gc.collect()  # start from an empty heap of cyclic garbage
    gc.disable()
    try:
        ref, sentinel_id = workload()
        alive_before = ref() is not None

        # The collector clears weakrefs to unreachable objects before saving
        # them, so a gc-only sentinel reads dead now: look for it by identity.
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
        finally:
            gc.set_debug(0)
        garbage = list(gc.garbage)
        gc.garbage.clear()
        in_garbage = any(id(obj) == sentinel_id and type(obj) is Sentinel for obj in garbage)
        frames = tuple(describe_frame(obj) for obj in garbage if isinstance(obj, types.FrameType))
        del garbage

        gc.collect()
        alive_after = ref() is not None
        return Retention(alive_before, in_garbage, frames, alive_after)
    finally:
        if was_enabled:
            gc.enable()


def decoration_workload(target, kind, form, depth):
    return lambda: hold_sentinel_while(lambda: decorate_once(target, kind, form), depth)


# ---------------------------------------------------------------------------
# Tests


class SourceLocationTests(unittest.TestCase):
    """_decorator_location is the decorated definition's file, decorator line and name."""

    def assert_location(self, decorated, decorator_line: int, name: str) -> None:
        location = decorated._decorator_location
        self.assertIsInstance(location, reference.SourceLocation)
        self.assertEqual(location.file, __file__)
        # The rule: the decorator's line (co_firstlineno), not the def line.
        self.assertEqual(location.line, decorator_line)
        self.assertEqual(location.function, name)

    def test_bare_kernel_records_the_decorator_line(self):
        line = current_line()
        @reference.kernel
        def bare_kernel():
            return 1

        self.assert_location(bare_kernel, line + 1, "bare_kernel")
        self.assertEqual(bare_kernel(), 1)

    def test_kernel_with_options_records_the_decorator_line(self):
        line = current_line()
        @reference.kernel(**reference.kernel_options)
        def kernel_with_options():
            return 2

        self.assert_location(kernel_with_options, line + 1, "kernel_with_options")
        self.assertEqual(kernel_with_options.options, reference.kernel_options)

    def test_bare_jit_records_the_decorator_line(self):
        line = current_line()
        @reference.jit
        def bare_jit(x):
            return x + 1

        self.assert_location(bare_jit, line + 1, "bare_jit")
        self.assertEqual(bare_jit(1), 2)

    def test_jit_with_options_records_the_decorator_line(self):
        line = current_line()
        @reference.jit(**reference.jit_options)
        def jit_with_options():
            return 3

        self.assert_location(jit_with_options, line + 1, "jit_with_options")

    def test_empty_options_form_records_the_decorator_line(self):
        line = current_line()
        @reference.kernel()
        def kernel_empty_options():
            return None

        self.assert_location(kernel_empty_options, line + 1, "kernel_empty_options")

    def test_a_multi_line_decorator_records_its_first_line(self):
        line = current_line()
        @reference.jit(
            preprocess=True,
        )
        def jit_multi_line():
            return None

        self.assert_location(jit_multi_line, line + 1, "jit_multi_line")

    def test_nested_functions_record_their_own_location(self):
        def outer():
            line = current_line()
            @reference.kernel
            def inner_bare():
                return None

            @reference.jit(name="inner")
            def inner_with_options():
                return None

            return line, inner_bare, inner_with_options

        line, inner_bare, inner_with_options = outer()
        self.assert_location(inner_bare, line + 1, "inner_bare")
        self.assert_location(inner_with_options, line + 5, "inner_with_options")

    def test_a_callable_without_code_falls_back_to_the_call_site(self):
        class Callable_:
            def __call__(self):
                return None

        instance = Callable_()
        line = current_line()
        bare = reference.kernel(instance)
        with_options = reference.jit(name="x")(instance)
        self.assertEqual(bare._decorator_location, (__file__, line + 1, "Callable_"))
        self.assertEqual(with_options._decorator_location, (__file__, line + 2, "Callable_"))

    def test_the_location_is_immutable_plain_data(self):
        @reference.kernel
        def k():
            return None

        location = k._decorator_location
        self.assertEqual(tuple(type(field) for field in location), (str, int, str))
        with self.assertRaises(AttributeError):
            location.line = 0  # type: ignore[misc]

    def test_no_frame_is_reachable_from_a_decorated_function(self):
        def make():
            @reference.kernel(max_threads=64)
            def k():
                return None

            return k

        decorated = make()
        # Walk what the wrapper owns, stopping at modules, module globals and
        # classes, which lead to the whole interpreter and own no frames here.
        stop = {id(m.__dict__) for m in list(sys.modules.values()) if m is not None}
        seen: set[int] = set()
        pending = [decorated]
        while pending:
            obj = pending.pop()
            if id(obj) in seen or id(obj) in stop:
                continue
            seen.add(id(obj))
            self.assertNotIsInstance(obj, types.FrameType)
            if isinstance(obj, (types.ModuleType, type)):
                continue
            pending.extend(gc.get_referents(obj))
        self.assertGreater(len(seen), 3)


class ValidationTests(unittest.TestCase):
    def test_a_function_and_options_together_are_rejected(self):
        with self.assertRaises(TypeError):
            reference.kernel(lambda: None, max_threads=1)

    def test_a_non_callable_is_rejected(self):
        with self.assertRaises(TypeError):
            reference.jit(42)
        with self.assertRaises(TypeError):
            reference.jit()(42)

    def test_unknown_and_mistyped_options_are_rejected(self):
        with self.assertRaises(TypeError):
            reference.kernel(preprocess=True)
        with self.assertRaises(TypeError):
            reference.kernel(max_threads="many")

    def test_options_are_normalised_read_only(self):
        decorated = reference.jit(preprocess=True, name="n")(lambda: None)
        self.assertEqual(list(decorated.options), ["name", "preprocess"])
        with self.assertRaises(TypeError):
            decorated.options["name"] = "other"  # type: ignore[index]


class TargetProtocolTests(unittest.TestCase):
    def check_protocol(self, target: types.ModuleType) -> None:
        self.assertTrue(callable(target.kernel))
        self.assertTrue(callable(target.jit))
        self.assertIsInstance(getattr(target, "kernel_options", {}), dict)
        self.assertIsInstance(getattr(target, "jit_options", {}), dict)
        self.assertIsInstance(getattr(target, "TARGET_NAME", ""), str)

    def test_the_reference_package_is_a_target(self):
        self.check_protocol(reference)
        self.assertEqual(reference.TARGET_NAME, "reference")

    def test_every_model_is_a_target_with_an_expectation(self):
        for name in MODEL_NAMES:
            with self.subTest(model=name):
                target = load_target(name)
                try:
                    self.check_protocol(target)
                    self.assertEqual(target.TARGET_NAME, name)
                    expect = read_expectations(name)
                    self.assertIn(expect["exit"], {"0", "1"})
                    self.assertIn("verdict", expect)
                finally:
                    getattr(target, "_REGISTRY", []).clear()


class ReferenceRetentionTests(unittest.TestCase):
    """The reference keeps nothing alive: refcounting alone frees the stack."""

    def assert_clean(self, retention: Retention) -> None:
        self.assertEqual(retention.verdict, "freed-by-refcount", retention)
        self.assertFalse(retention.sentinel_in_garbage)
        self.assertEqual(retention.garbage_frames, ())

    def test_decoration_frees_the_sentinel_by_refcount(self):
        for kind in KINDS:
            for form in FORMS:
                for depth in DEPTHS:
                    with self.subTest(kind=kind, form=form, depth=depth):
                        self.assert_clean(measure(decoration_workload(reference, kind, form, depth)))

    def test_a_lazily_imported_kernel_module_frees_the_sentinel_by_refcount(self):
        with LazyKernelModule(reference) as module:
            retention = measure(lambda: hold_sentinel_while(module.import_it, 2))
        self.assert_clean(retention)


class RegressionModelTests(unittest.TestCase):
    """The same measurements catch each modelled defect (so they can fail)."""

    def setUp(self) -> None:
        self.targets: dict[str, types.ModuleType] = {}

    def tearDown(self) -> None:
        for target in self.targets.values():
            getattr(target, "_REGISTRY", []).clear()  # release what decorator_frame_attr pinned
        self.targets.clear()
        gc.collect()

    def target(self, name: str) -> types.ModuleType:
        if name not in self.targets:
            self.targets[name] = load_target(name)
        return self.targets[name]

    def each_decoration(self, name: str):
        target = self.target(name)
        for kind in KINDS:
            for form in FORMS:
                for depth in DEPTHS:
                    with self.subTest(model=name, kind=kind, form=form, depth=depth):
                        yield kind, measure(decoration_workload(target, kind, form, depth))

    def test_frame_cycle_461_is_freed_by_gc_only(self):
        expected = read_expectations("frame_cycle_461")["verdict"]
        self.assertEqual(expected, "freed-by-gc-only")
        for kind, retention in self.each_decoration("frame_cycle_461"):
            self.assertEqual(retention.verdict, expected, retention)
            self.assertTrue(retention.sentinel_in_garbage, retention)
            names = [frame.split(" @ ")[0] for frame in retention.garbage_frames]
            self.assertIn(kind, names)  # the classmethod's own frame: the cycle
            self.assertIn("hold_sentinel_while", names)  # pinned through f_back

    def test_decorator_frame_attr_is_never_freed(self):
        expected = read_expectations("decorator_frame_attr")["verdict"]
        self.assertEqual(expected, "never-freed")
        for _, retention in self.each_decoration("decorator_frame_attr"):
            self.assertEqual(retention.verdict, expected, retention)
            self.assertFalse(retention.sentinel_in_garbage, retention)

    def test_temporary_back_is_freed_by_refcount(self):
        expected = read_expectations("temporary_back")["verdict"]
        self.assertEqual(expected, "freed-by-refcount")
        for _, retention in self.each_decoration("temporary_back"):
            self.assertEqual(retention.verdict, expected, retention)
            self.assertEqual(retention.garbage_frames, ())

    def test_lazy_import_through_each_model_gives_its_verdict(self):
        for name in MODEL_NAMES:
            with self.subTest(model=name):
                with LazyKernelModule(self.target(name)) as module:
                    retention = measure(lambda: hold_sentinel_while(module.import_it, 2))
                self.assertEqual(retention.verdict, read_expectations(name)["verdict"], retention)


if __name__ == "__main__":
    unittest.main()
