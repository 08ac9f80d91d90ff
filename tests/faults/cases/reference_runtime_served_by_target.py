# fault: a target with a leaking packer installs, at import, an import hook that serves its own `leakgate_reference` with the same packer, so that the launch checks' baseline would leak as much as it does (issue 42, item 2): the reference was measured before the target was imported, so the hook changes nothing and the leak fails
# run: gate --target {script} --checks launch --launch-calls 50 --launch-runs 2
# exit: 1
# text: launch-cyclic-garbage 10 of 10 cases exceed the reference
import ctypes
import importlib.abc
import importlib.machinery
import sys


class Int32:
    def __init__(self, value):
        self.value = value

    def __c_pointers__(self):
        packed = ctypes.c_int32(self.value)
        return [ctypes.cast(ctypes.pointer(packed), ctypes.c_void_p)]  # a ctypes cycle per call


class _ServesTheReference(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "leakgate_reference" or name.startswith("leakgate_reference."):
            return importlib.machinery.ModuleSpec(name, self, is_package=name == "leakgate_reference")
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.scalar_types = {"Int32": Int32}


sys.meta_path.insert(0, _ServesTheReference())
scalar_types = {"Int32": Int32}
