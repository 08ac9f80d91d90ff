"""leakgate's decoration and import workloads, run inside a worker under gc.disable().

leakgate compiles this file under the name "<leakgate:harness>": frames of the functions below
are leakgate's own and never appear in a finding, although the sentinels they hold do.

The target protocol: a module with `kernel` and `jit` decorators, each usable bare
(`@kernel`) and with options (`@kernel(**kernel_options)`), and optional `kernel_options`,
`jit_options` (dicts, default {}) and `TARGET_NAME`.
"""

import importlib
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
    return module


def _kernel(dsl):
    @dsl.kernel
    def leakgate_kernel():
        pass


def _kernel_with_options(dsl):
    @dsl.kernel(**getattr(dsl, "kernel_options", {}))
    def leakgate_kernel():
        pass


def _jit(dsl):
    @dsl.jit
    def leakgate_jit():
        pass


def _jit_with_options(dsl):
    @dsl.jit(**getattr(dsl, "jit_options", {}))
    def leakgate_jit():
        pass


FORMS = {
    "kernel": ("kernel", _kernel),
    "kernel(options)": ("kernel", _kernel_with_options),
    "jit": ("jit", _jit),
    "jit(options)": ("jit", _jit_with_options),
}


def _hold(depth, label, nbytes, action, level=1):
    # A sentinel is a local of each of the `depth` frames above the decoration; `level` 1 is the
    # outermost of them.
    sentinel = _leakgate.sentinel(f"{label} depth={depth} frame={level}", nbytes)
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


def prepare_decorate(spec, directory):
    """Imports the target and writes the lazy kernel module; returns the forms to run."""
    dsl = load_target(spec)
    with open(os.path.join(directory, LAZY_MODULE + ".py"), "w") as out:
        out.write(LAZY_MODULE_SOURCE)
    importlib.invalidate_caches()
    present = [name for name, (attribute, _) in FORMS.items() if hasattr(dsl, attribute)]
    missing = sorted({attribute for attribute, _ in FORMS.values() if not hasattr(dsl, attribute)})
    return dsl, present, missing


def run_decorate(dsl, forms, depths, nbytes, directory):
    """Defines kernels and jit functions in frames holding sentinels; returns the errors."""
    errors = []
    for name in forms:
        define = FORMS[name][1]
        for depth in depths:
            _attempt(errors, f"{name}@depth{depth}", lambda: _hold(depth, name, nbytes, lambda: define(dsl)))
    if len(forms) == len(FORMS):
        _attempt(errors, "lazy-import", lambda: _hold(1, "lazy-import", nbytes, lambda: _lazy_import(directory)))
    return errors


def run_import(spec, nbytes):
    """Imports the target inside a frame that holds a sentinel; returns the errors."""
    errors = []
    _attempt(errors, "import", lambda: _hold(1, "import", nbytes, lambda: load_target(spec)))
    return errors
