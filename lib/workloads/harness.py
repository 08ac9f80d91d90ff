"""leakgate's decoration and import workloads, run inside a worker under gc.disable().

leakgate compiles this file under the name "<leakgate:harness>": frames of the functions below
are leakgate's own (a finding counts them, and names one only when the target keeps it), although
the sentinels they hold appear. The kernels it decorates are written to a real file
(KERNELS_SOURCE), whose frames are leakgate's own too.

The target protocol: a module with `kernel` and `jit` decorators, each usable bare
(`@kernel`) and with options (`@kernel(**kernel_options)`), and optional `kernel_options`,
`jit_options` (dicts, default {}), `TARGET_NAME` and `TARGET_PACKAGE` (the distribution under test as
pip names it, or a tuple of names of which the first installed counts: its version is reported;
an empty tuple: none). Or, for a DSL whose decorators do not fit
that, `decorators`: {name: {"decorator": d, "forms": [...], "arguments": (...), "options": {...}}}
with forms among "bare" (`@d`), "options" (`@d(**options)`), "arguments" (`@d(*arguments,
**options)`) and "class" (`@d` on a class, and one instance made).
"""

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import traceback

import _leakgate

TARGET_MODULE = "leakgate_target"
LAZY_MODULE = "leakgate_lazy_kernels"

# A kernel module as a user writes one: imported lazily, it decorates at import time.
LAZY_MODULE_SOURCE = '''\
import leakgate_target as dsl

@dsl.kernel
def lazy_kernel():
    pass

@dsl.kernel(**getattr(dsl, "kernel_options", {}))
def lazy_kernel_with_options():
    pass

@dsl.jit
def lazy_jit():
    pass

@dsl.jit(**getattr(dsl, "jit_options", {}))
def lazy_jit_with_options():
    pass
'''


def load_target(spec):
    """Imports the target ({"module": name} or {"path": file}) as `leakgate_target`."""
    if "path" in spec:
        module_spec = importlib.util.spec_from_file_location(TARGET_MODULE, spec["path"])
        if module_spec is None or module_spec.loader is None:
            raise ImportError(f"cannot load a Python module from {spec['path']}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[TARGET_MODULE] = module
        try:
            module_spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[TARGET_MODULE]
            raise
    else:
        module = importlib.import_module(spec["module"])
        sys.modules[TARGET_MODULE] = module
    global _loaded, _package
    _loaded, _package = (module, spec), _NOT_LOOKED_UP
    return module


# The target load_target loaded last, (module, spec); its package is looked up only when asked,
# after the measurement (the import of a target is measured, and the lookup is leakgate's work),
# and once for the workloads of a chain.
_loaded = None
_NOT_LOOKED_UP = object()
_package = _NOT_LOOKED_UP


def loaded_target_package():
    """{"name", "version"} of the distribution under test, for the target load_target loaded (None:
    no target, or not known). Called by the worker after the measured code."""
    global _package
    if _loaded is None:
        return None
    if _package is _NOT_LOOKED_UP:
        _package = _package_of(*_loaded)
    return _package


def _package_of(module, spec):
    """{"name", "version"} of the distribution under test: the target's TARGET_PACKAGE (a name, or
    a tuple of names of which the first installed is taken), else, for a target named by module,
    the distribution that installs its top-level package. None if unknown."""
    names = getattr(module, "TARGET_PACKAGE", None)
    if isinstance(names, str):
        names = (names,)
    if not isinstance(names, (tuple, list)) and "module" in spec:
        import importlib.metadata as metadata
        try:
            names = metadata.packages_distributions().get(spec["module"].split(".")[0], [])
        except Exception:  # a broken installed distribution must not fail the workload
            names = []
        names = names if len(names) == 1 else ()
    names = [name for name in names or () if isinstance(name, str) and name]
    for name in names:
        version = installed_version(name)
        if version is not None:
            return {"name": name, "version": version}
    return {"name": names[0], "version": None} if names else None


def _normalized(name):
    """A distribution's name as importlib.metadata compares them: each run of `-`, `_` and `.` one
    `_`, lower case (without re, which a worker need not import)."""
    out = []
    for char in name.lower():
        if char not in "-_.":
            out.append(char)
        elif not out or out[-1] != "_":
            out.append("_")
    return "".join(out)


def installed_version(name):
    """The version importlib.metadata.version(name) gives, None when it raises
    PackageNotFoundError. An installed wheel is read directly: the first directory on sys.path
    that holds NAME-VERSION.dist-info, its METADATA's Version header. Importing importlib.metadata
    (email, csv, zipfile) costs a worker about 35 ms, and its import of datetime leaves cyclic
    garbage. It is asked instead whenever the direct read might not be what it finds: another
    distribution finder on sys.meta_path, an .egg-info or a second dist-info of that name in the
    same directory, a sys.path entry that is a file (a zip), or a METADATA without Version."""
    wanted = _normalized(name)
    if all(getattr(finder, "find_distributions", None) is None or finder is importlib.machinery.PathFinder
           for finder in sys.meta_path):
        for entry in sys.path:
            if not isinstance(entry, str) or entry.lower().endswith(".egg"):
                break  # an egg's EGG-INFO: importlib.metadata reads it its own way
            try:
                children = os.listdir(entry or ".")
            except NotADirectoryError:
                break  # a zip: importlib.metadata looks inside
            except OSError:
                continue
            infos, eggs = [], 0
            for child in children:
                stem, dot, suffix = child.rpartition(".")
                if dot and suffix.lower() in ("dist-info", "egg-info") and _normalized(stem.partition("-")[0]) == wanted:
                    if suffix.lower() == "dist-info":
                        infos.append(child)
                    else:
                        eggs += 1
            if not infos and not eggs:
                continue
            if len(infos) == 1 and not eggs:
                version = _metadata_version(os.path.join(entry or ".", infos[0], "METADATA"))
                if version is not None:
                    return version
            break
        else:
            return None  # on no directory of sys.path: importlib.metadata finds none either
    import importlib.metadata as metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _metadata_version(path):
    """The first Version header of a METADATA file, as the email parser importlib.metadata uses
    reads it; None where the file is not plainly headers (then the caller asks importlib.metadata)."""
    try:
        with open(path, encoding="utf-8") as file:
            lines = file.read().split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    for at, line in enumerate(lines):
        line = line.rstrip("\r")
        if not line:
            return None  # the end of the headers
        if line[:1] in (" ", "\t"):
            continue  # a continuation of an earlier header
        key, colon, value = line.partition(":")
        if not colon or not all("!" <= char <= "~" for char in key):
            return None  # not a header line: the parser would end the headers here
        if key.lower() == "version":
            following = lines[at + 1] if at + 1 < len(lines) else ""
            if following[:1] in (" ", "\t"):
                return None  # a folded value
            return value.lstrip(" \t")
    return None


PROBE_MODULE = "leakgate_probe"


def load_probe(path):
    """Imports a Python probe plug-in (`gate --probe FILE.py`) as `leakgate_probe`."""
    module_spec = importlib.util.spec_from_file_location(PROBE_MODULE, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot load a Python module from {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[PROBE_MODULE] = module
    module_spec.loader.exec_module(module)
    return module


# The functions the decorate workload decorates live in a real file, written next to the lazy
# module: a DSL that reads a kernel's source (inspect.getsource, as triton.jit, warp.kernel and
# some releases of nvidia-cutlass-dsl do) finds it. Each decorating frame holds a sentinel of its
# own, so a decorator that keeps the frame applying it, or that frame's f_locals, keeps that.
KERNELS_MODULE = "leakgate_kernels"
KERNELS_SOURCE = '''\
"""Written by leakgate's decorate workload: the functions it decorates, one per form."""
import _leakgate


def define_kernel(dsl, label, nbytes):
    decorating_frame_sentinel = _leakgate.sentinel(label, nbytes)

    @dsl.kernel
    def leakgate_kernel():
        pass


def define_kernel_with_options(dsl, label, nbytes):
    decorating_frame_sentinel = _leakgate.sentinel(label, nbytes)

    @dsl.kernel(**getattr(dsl, "kernel_options", {}))
    def leakgate_kernel():
        pass


def define_jit(dsl, label, nbytes):
    decorating_frame_sentinel = _leakgate.sentinel(label, nbytes)

    @dsl.jit
    def leakgate_jit():
        pass


def define_jit_with_options(dsl, label, nbytes):
    decorating_frame_sentinel = _leakgate.sentinel(label, nbytes)

    @dsl.jit(**getattr(dsl, "jit_options", {}))
    def leakgate_jit():
        pass


# A declared decorator (the target's `decorators`), in each of the four forms.
def define_declared_bare(decorate, label, nbytes):
    decorating_frame_sentinel = _leakgate.sentinel(label, nbytes)

    @decorate
    def leakgate_kernel():
        pass


def define_declared_called(decorate, arguments, options, label, nbytes):
    decorating_frame_sentinel = _leakgate.sentinel(label, nbytes)

    @decorate(*arguments, **options)
    def leakgate_kernel():
        pass


def define_declared_class(decorate, label, nbytes):
    decorating_frame_sentinel = _leakgate.sentinel(label, nbytes)

    @decorate
    class LeakgateKernels:
        def leakgate_method(self):
            return 0

    instance = LeakgateKernels()
'''

FORMS = {
    "kernel": ("kernel", "define_kernel"),
    "kernel(options)": ("kernel", "define_kernel_with_options"),
    "jit": ("jit", "define_jit"),
    "jit(options)": ("jit", "define_jit_with_options"),
}


def kernels_file(directory):
    """Where prepare_decorate writes the kernels module (leakgate marks its frames as its own)."""
    return os.path.join(directory, KERNELS_MODULE + ".py")


def _load_kernels(directory):
    module_spec = importlib.util.spec_from_file_location(KERNELS_MODULE, kernels_file(directory))
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[KERNELS_MODULE] = module
    module_spec.loader.exec_module(module)
    return module


# Device sentinels (configure_device): bytes per case, and torch when it is the second sentinel.
_device = {"nbytes": 0, "torch": None}


def configure_device(nbytes):
    """Places device sentinels of `nbytes` from now on when CUDA can be used, and a torch CUDA
    tensor beside each when torch is importable with CUDA. Returns why each is not placed."""
    _device["nbytes"] = 0
    _device["torch"] = None
    if nbytes <= 0:
        return {"device": "device sentinels are off (--device-sentinel-mib 0)", "torch": "device sentinels are off"}
    status = _leakgate.cuda_status()
    if not status["available"]:
        return {"device": status["reason"], "torch": status["reason"]}
    _device["nbytes"] = nbytes
    reasons = {"device": "", "torch": ""}
    if importlib.util.find_spec("torch") is None:
        reasons["torch"] = "torch is not importable in the target's environment"
        return reasons
    import torch

    if not torch.cuda.is_available():
        reasons["torch"] = "torch is importable but torch.cuda.is_available() is False"
        return reasons
    torch.cuda.init()
    _device["torch"] = torch
    return reasons


def _hold(depth, label, nbytes, action, level=1):
    # A sentinel is a local of each of the `depth` frames above the decoration; `level` 1 is the
    # outermost of them. The outermost also holds the device sentinels, when configured.
    sentinel = _leakgate.sentinel(f"{label} depth={depth} frame={level}", nbytes)
    if level == 1 and _device["nbytes"]:
        device_sentinel = _leakgate.device_sentinel(f"{label} depth={depth} device", _device["nbytes"])
        torch = _device["torch"]
        if torch is not None:
            tensor = torch.empty(_device["nbytes"], dtype=torch.uint8, device="cuda")
            _leakgate.track(tensor, f"{label} depth={depth} torch", "torch", _device["nbytes"])
    if level < depth:
        _hold(depth, label, nbytes, action, level + 1)
    else:
        action()


def _lazy_import(directory):
    sys.path.insert(0, directory)
    try:
        importlib.import_module(LAZY_MODULE)
    finally:
        sys.path.remove(directory)


def _attempt(errors, label, call):
    # Errors are (case, "Type: message", traceback text): plain strings, no frames kept.
    try:
        call()
    except Exception as error:
        errors.append((label, f"{type(error).__name__}: {error}", traceback.format_exc()))


FORM_KINDS = ("bare", "options", "arguments", "class")


def declared_decorators(dsl):
    """The target's `decorators`, checked: {name: (decorator, forms, arguments, options)}; None
    when it declares none (then `kernel` and `jit` are the protocol)."""
    declared = getattr(dsl, "decorators", None)
    if declared is None:
        return None
    if not isinstance(declared, dict) or not declared:
        raise TypeError("`decorators` must be a non-empty dict of name: {decorator, forms, ...}")
    checked = {}
    for name, entry in declared.items():
        if not isinstance(entry, dict) or not callable(entry.get("decorator")):
            raise TypeError(f"decorator {name!r}: must be a dict with a callable `decorator`")
        forms = list(entry.get("forms", ()))
        if not forms or any(form not in FORM_KINDS for form in forms):
            raise TypeError(f"decorator {name!r}: `forms` must list some of {FORM_KINDS}, not {forms!r}")
        arguments = tuple(entry.get("arguments", ()))
        options = dict(entry.get("options", {}))
        checked[str(name)] = (entry["decorator"], forms, arguments, options)
    return checked


def _case_name(name, form):
    return name if form == "bare" else f"{name}({form})"


def decoration_plan(dsl):
    """{case name: define(label, nbytes)}: every form of every decorator the target has, in the
    order the reports list them."""
    kernels = sys.modules[KERNELS_MODULE]
    declared = declared_decorators(dsl)
    plan = {}
    if declared is None:
        for name, (attribute, function) in FORMS.items():
            if hasattr(dsl, attribute):
                define = getattr(kernels, function)
                plan[name] = lambda label, nbytes, define=define: define(dsl, label, nbytes)
        return plan
    for name, (decorator, forms, arguments, options) in declared.items():
        for form in forms:
            if form == "bare":
                define = lambda label, nbytes, d=decorator: kernels.define_declared_bare(d, label, nbytes)
            elif form == "class":
                define = lambda label, nbytes, d=decorator: kernels.define_declared_class(d, label, nbytes)
            else:
                called_with = arguments if form == "arguments" else ()
                define = (lambda label, nbytes, d=decorator, a=called_with, o=options:
                          kernels.define_declared_called(d, a, o, label, nbytes))
            plan[_case_name(name, form)] = define
    return plan


def _declared_lazy_source(declared):
    """The lazy kernel module for declared decorators: each form once, at import time."""
    lines = ["import leakgate_target as dsl", "", "_declared = dsl.decorators", ""]
    for index, (name, (_, forms, _, _)) in enumerate(declared.items()):
        entry = f"_declared[{name!r}]"
        for form in forms:
            if form == "bare":
                head = f"@{entry}['decorator']"
            elif form == "class":
                lines += [f"@{entry}['decorator']", f"class LazyKernels{index}:",
                          "    def lazy_method(self):", "        return 0", "", "",
                          f"lazy_instance_{index} = LazyKernels{index}()", ""]
                continue
            else:
                arguments = f"*{entry}.get('arguments', ())" if form == "arguments" else ""
                head = f"@{entry}['decorator']({arguments}{', ' if arguments else ''}**{entry}.get('options', {{}}))"
            lines += [head, f"def lazy_{index}_{form}():", "    pass", "", ""]
    return "\n".join(lines) + "\n"


def prepare_decorate(spec, directory):
    """Imports the target and writes the kernels module and the lazy kernel module; returns the
    target, the forms to run, the decorators it lacks, the names of its scalar types (the launch
    protocol) and the devices of its real launch cases."""
    dsl = load_target(spec)
    declared = declared_decorators(dsl)
    with open(kernels_file(directory), "w") as out:
        out.write(KERNELS_SOURCE)
    with open(os.path.join(directory, LAZY_MODULE + ".py"), "w") as out:
        out.write(LAZY_MODULE_SOURCE if declared is None else _declared_lazy_source(declared))
    importlib.invalidate_caches()
    _load_kernels(directory)  # before the measurement, so that leakgate seals it (sealKernels)
    if declared is None:
        present = [name for name, (attribute, _) in FORMS.items() if hasattr(dsl, attribute)]
        missing = sorted({attribute for attribute, _ in FORMS.values() if not hasattr(dsl, attribute)})
    else:
        present = [_case_name(name, form) for name, (_, forms, _, _) in declared.items() for form in forms]
        missing = []
    return dsl, present, missing, sorted(scalar_types_of(dsl)), list(launch_devices_of(dsl))


def run_decorate(dsl, forms, depths, nbytes, directory):
    """Defines kernels and jit functions in frames holding sentinels; returns the errors."""
    errors = []
    plan = decoration_plan(dsl)
    for name in forms:
        define = plan[name]
        for depth in depths:
            label = f"{name} depth={depth} decorating"
            _attempt(errors, f"{name}@depth{depth}",
                     lambda: _hold(depth, name, nbytes, lambda: define(label, nbytes)))
    # The lazy module uses every form: the legacy one needs all four, a declared one is written
    # from the declaration.
    if len(forms) == len(FORMS) or declared_decorators(dsl) is not None:
        _attempt(errors, "lazy-import", lambda: _hold(1, "lazy-import", nbytes, lambda: _lazy_import(directory)))
    return errors


# --- Retention per decoration: N distinct functions, each decorated and dropped -------------------
UNITS_MODULE = "leakgate_units"
UNIT_FORMS = {"kernel": "kernel", "jit": "jit"}


def prepare_decorations(spec, directory, per_form, extra):
    """Imports the target and a module of distinct functions, `per_form` for each form it has and
    `extra` more (their own code objects, in a real file, so that decorators that read source
    can); returns the target, the forms and the module."""
    dsl = load_target(spec)
    forms = list(_unit_decorators(dsl))
    count = per_form * len(forms) + extra
    path = os.path.join(directory, UNITS_MODULE + ".py")
    with open(path, "w") as out:
        out.write('"""Written by leakgate\'s decorations workload: distinct functions to decorate."""\n')
        for i in range(count):
            out.write(f"\n\ndef leakgate_unit_{i}():\n    return {i}\n")
    module_spec = importlib.util.spec_from_file_location(UNITS_MODULE, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[UNITS_MODULE] = module
    module_spec.loader.exec_module(module)
    for name, function in vars(module).items():
        if name.startswith("leakgate_unit_"):
            _fill_code_caches(function.__code__)
    return dsl, forms, module


def _fill_code_caches(code):
    """From CPython 3.12 a code object makes co_code, co_varnames, co_cellvars and co_freevars
    when first read and keeps them (a 32-byte block, and the bytes object). The units module keeps
    its code objects, so a decorator that reads one of them (inspect.signature reads co_varnames)
    would seem to keep a block per decorated function: read them before anything is counted."""
    return code.co_code, code.co_varnames, code.co_cellvars, code.co_freevars


def _unit_decorators(dsl):
    """{form name: decorate(function)} for the decorations workload: `kernel` and `jit` bare, or
    each declared decorator in its first function form (bare, else called with its options or
    arguments), and each class decorator as `name(class)` (its units are instances: see
    decoration_body)."""
    declared = declared_decorators(dsl)
    if declared is None:
        return {name: getattr(dsl, attribute) for name, attribute in UNIT_FORMS.items() if hasattr(dsl, attribute)}
    units = {}
    for name, (decorator, forms, arguments, options) in declared.items():
        for form in forms:
            if form == "bare":
                units[name] = decorator
            elif form in ("options", "arguments"):
                called_with = arguments if form == "arguments" else ()
                units[_case_name(name, form)] = (
                    lambda function, d=decorator, a=called_with, o=options: d(*a, **o)(function))
            else:
                continue
            break
        if "class" in forms:
            units[_case_name(name, "class")] = decorator
    return units


def is_class_form(form):
    """Whether the decorations workload's form is a class decorator's (its unit is an instance)."""
    return form.endswith("(class)")


# The one class per class form that the workload makes instances of, decorated and not: made at
# the form's first body (the warm-up, whose collection takes whatever decorating it left), so that
# the measured loops count what each instance costs and nothing else.
_unit_classes = {}


def _unit_class(dsl, form, module, decorated):
    key = (form, decorated)
    if key not in _unit_classes:
        name = "LeakgateUnit" + "".join(c for c in form.title() if c.isalnum())
        cls = type(name, (), {"__module__": UNITS_MODULE, "leakgate_method": lambda self: 0})
        _unit_classes[key] = _unit_decorators(dsl)[form](cls) if decorated else cls
    return _unit_classes[key]


def _unit_codes(module, start):
    """The module's distinct code objects from the `start`-th on, in the order they were written."""
    names = sorted((name for name in vars(module) if name.startswith("leakgate_unit_")),
                   key=lambda name: int(name.rsplit("_", 1)[1]))
    return iter([getattr(module, name).__code__ for name in names[start:]])


def decoration_body(dsl, form, module, start):
    """A callable that decorates a new function with the form's decorator and drops the result:
    the loop body the workload counts. Each function is made in the call from the next of the
    module's distinct code objects, so a decorator that keeps nothing leaves nothing (the module's
    own functions are not touched: what a decorator stores on a function goes with it). For a
    class decorator the body makes an instance of the one decorated class and drops it."""
    import types

    if is_class_form(form):
        return _unit_class(dsl, form, module, True)
    decorator = _unit_decorators(dsl)[form]
    codes, namespace, make = _unit_codes(module, start), vars(module), types.FunctionType
    return lambda: decorator(make(next(codes), namespace))


def undecorated_body(dsl, form, module, start):
    """The same loop without the decorator: what making and dropping the functions (or the
    instances of the same class, undecorated) costs."""
    import types

    if is_class_form(form):
        return _unit_class(dsl, form, module, False)
    codes, namespace, make = _unit_codes(module, start), vars(module), types.FunctionType
    return lambda: make(next(codes), namespace)


def kept_types(body, count, collect):
    """The types of the gc-tracked objects that `count` more calls of `body` leave alive after a
    full collection (`collect`: leakgate's own, which the gc guard allows), per call, most first,
    each with one of the objects those calls left (the newest), for saying what holds it."""
    import collections
    import gc as gc_module

    collect()
    objects = gc_module.get_objects()
    before = collections.Counter(type(o).__qualname__ for o in objects)
    earlier = {id(o) for o in objects}
    del objects  # the list would keep alive what the calls let go
    for _ in range(count):
        body()
    collect()
    after = collections.Counter()
    newest, units = {}, None
    for o in gc_module.get_objects():
        name = type(o).__qualname__
        after[name] += 1
        if id(o) not in earlier:
            newest[name] = o
            if name == "function" and getattr(o, "__module__", None) == UNITS_MODULE:
                units = o  # one of the decorated functions themselves: what holds it says the most
    if units is not None:
        newest["function"] = units
    # At least one object per two decorations: below that, the count's own bookkeeping shows.
    grown = [(name, (after[name] - before[name]) / count, newest.get(name)) for name in after
             if after[name] - before[name] >= count / 2]
    grown.sort(key=lambda item: -item[1])
    return grown[:6]


def run_import(spec, nbytes):
    """Imports the target inside a frame that holds a sentinel; returns the errors."""
    errors = []
    _attempt(errors, "import", lambda: _hold(1, "import", nbytes, lambda: load_target(spec)))
    return errors


# --- The launch path: packing scalar kernel arguments -------------------------------------------
# The target protocol's launch extension: `scalar_types`, a dict from type names (Int8 ... Float64)
# to classes T such that `T(v).__c_pointers__()` returns a list of ctypes.c_void_p, each the
# address of the packed value.

REFERENCE_MODULE = "leakgate_reference"

SIGNED_VALUES = (0, 1, 7, -3, 1000)
UNSIGNED_VALUES = (0, 1, 7, 200, 1000)
BOOLEAN_VALUES = (True, False)
FLOAT_VALUES = (0.0, 1.5, -2.25, 0.001)


def scalar_types_of(module):
    return dict(getattr(module, "scalar_types", None) or {})


def _fresh_reference():
    """The reference runtime, imported before any of the target's code runs: a copy of it already
    in sys.modules is dropped first. leakgate then checks that it came from its own data and seals
    it (harness_loader.cpp, sealReference)."""
    for name in [name for name in sys.modules if name == REFERENCE_MODULE or name.startswith(REFERENCE_MODULE + ".")]:
        del sys.modules[name]
    return importlib.import_module(REFERENCE_MODULE)


def prepare_reference():
    """The reference's scalar types, by name: imported before any of the target's code runs (the
    workloads that compare with it measure it first, so nothing the target does reaches its
    figures)."""
    return scalar_types_of(_fresh_reference())


def prepare_target_launch(spec):
    """The target's scalar types, by name."""
    return scalar_types_of(load_target(spec))


def representative_values(name):
    if name == "Boolean":
        return BOOLEAN_VALUES
    if name.startswith("Int"):
        return SIGNED_VALUES
    if name.startswith("Uint"):
        return UNSIGNED_VALUES
    return FLOAT_VALUES


def launch_calls(scalar_type, value):
    """Two callables: construction and packing, as a launch does it; and packing alone."""
    existing = scalar_type(value)
    return (lambda: scalar_type(value).__c_pointers__()), existing.__c_pointers__


# --- The real launch: kernels the DSL compiled ----------------------------------------------------
# The target protocol's real-launch extension: `launch_cases(device)` returns {name: case}, each
# case a dict with `launch` (a callable that launches a kernel the DSL compiled, once) and
# `arguments` (a callable returning the tuple of arguments for one launch: as a user's loop makes
# them, fresh each time). `launch_devices` (default ("cuda",)) says where the cases can run:
# "cuda", and "cpu" for a DSL that also launches on the CPU.

LAUNCH_DEVICES = ("cuda", "cpu")


def launch_devices_of(module):
    """The devices the target's launch cases run on; () without `launch_cases`."""
    if not callable(getattr(module, "launch_cases", None)):
        return ()
    devices = getattr(module, "launch_devices", ("cuda",))
    if isinstance(devices, str) or not all(device in LAUNCH_DEVICES for device in devices):
        raise TypeError(f"`launch_devices` must be a tuple of {LAUNCH_DEVICES}, not {devices!r}")
    return tuple(devices)


def prepare_real_launch(spec):
    """Imports the target; returns it and its launch devices."""
    target = load_target(spec)
    return target, launch_devices_of(target)


def reference_launch_call(types):
    """The reference runtime's packing of one Int32 (`types`: prepare_reference's), as the
    echo-kernel reference launch packs it."""
    return launch_calls(types["Int32"], 7)[0]


def _noop(*arguments):
    return None


def real_launch_cases(target, device):
    """[(name, launch loop body, no-op loop body)]: one launch with fresh arguments, and the same
    arguments handed to a no-op, so that the launch's own cost is the difference."""
    cases = target.launch_cases(device)
    if not isinstance(cases, dict) or not cases:
        raise TypeError(f"`launch_cases({device!r})` must return a non-empty dict of name: case, "
                        f"not {type(cases).__name__}")
    bodies = []
    for name, case in cases.items():
        if not isinstance(case, dict) or not callable(case.get("launch")) or not callable(case.get("arguments")):
            raise TypeError(f"launch case {name!r} must be a dict with callables `launch` and `arguments`")
        if not isinstance(case["arguments"](), tuple):
            raise TypeError(f"launch case {name!r}: `arguments()` must return a tuple")
        launch, arguments = case["launch"], case["arguments"]
        bodies.append((str(name), lambda launch=launch, arguments=arguments: launch(*arguments()),
                       lambda arguments=arguments: _noop(*arguments())))
    return bodies


def top_allocation_sites(call, calls, limit=3):
    """Where `call` allocates: the results are kept alive so that tracemalloc sees them."""
    import tracemalloc

    tracemalloc.start(1)
    try:
        before = tracemalloc.take_snapshot()
        kept = [call() for _ in range(calls)]
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    ignore = (tracemalloc.Filter(False, "<leakgate:*"), tracemalloc.Filter(False, tracemalloc.__file__))
    stats = after.filter_traces(ignore).compare_to(before.filter_traces(ignore), "lineno")
    del kept
    stats.sort(key=lambda stat: stat.count_diff, reverse=True)  # most blocks per call first
    sites = []
    for stat in stats[:limit]:
        if stat.count_diff <= 0:
            continue
        frame = stat.traceback[0]
        sites.append((frame.filename, frame.lineno, stat.count_diff / calls, stat.size_diff / calls))
    return sites


def pack_bytes(scalar_type, value, nbytes):
    """The bytes behind the first pointer `T(value).__c_pointers__()` returns."""
    import ctypes

    pointers = scalar_type(value).__c_pointers__()
    address = pointers[0].value if isinstance(pointers[0], ctypes.c_void_p) else int(pointers[0])
    return ctypes.string_at(address, nbytes)


def pack_distinct(scalar_type, start, count, floating):
    """Packs `count` distinct values once each, from the `start`-th of a fixed stream."""
    if floating:
        for i in range(start, start + count):
            scalar_type(i * 0.5 + 0.25).__c_pointers__()
    else:
        for i in range(start, start + count):
            scalar_type(i + 1000).__c_pointers__()


def soak(scalar_types, steps, seconds, sample_every, max_growth):
    """The incident's loop: every step packs one launch's scalars and replaces one of 64
    long-lived buffers of varied sizes; RSS is read every `sample_every` steps. Stops early, and
    says so, once RSS has grown `max_growth` bytes since the first sample: the slope is known by
    then, and the memory stays bounded. Returns (samples, stopped early)."""
    import random
    import time

    cases = [(scalar_type, representative_values(name)[1]) for name, scalar_type in sorted(scalar_types.items())]
    ring = [None] * 64
    # Below glibc's mmap threshold (128 KiB): blocks come from the heap, as a training loop's
    # small tensors' host buffers do, and RSS does not jump with every mmap/munmap.
    sizes = (256, 4096, 32768, 98304)
    chooser = random.Random(20261130)
    series = []
    started = time.monotonic()
    step = 0
    while (step < steps) if steps else (time.monotonic() - started < seconds):
        for scalar_type, value in cases:
            scalar_type(value).__c_pointers__()
        ring[step % 64] = bytearray(chooser.choice(sizes))
        if step % sample_every == 0:
            series.append((step, _leakgate.rss_bytes()))
            if series[-1][1] - series[0][1] >= max_growth:
                return series, True
        step += 1
    series.append((step, _leakgate.rss_bytes()))
    return series, False
