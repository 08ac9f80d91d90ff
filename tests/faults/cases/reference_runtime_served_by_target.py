# fault: a target installs, at import, an import hook that serves its own `leakgate_reference`, whose packer the launch checks would take as the baseline (issue 42, item 2)
# run: gate --target {script} --checks launch --launch-calls 50 --launch-runs 2
# exit: 3
# text: the reference runtime's `leakgate_reference` is not leakgate's own
import importlib.abc
import importlib.machinery
import sys


class _ServesTheReference(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "leakgate_reference" or name.startswith("leakgate_reference."):
            return importlib.machinery.ModuleSpec(name, self, is_package=name == "leakgate_reference")
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.scalar_types = {}


sys.meta_path.insert(0, _ServesTheReference())
scalar_types = {}
