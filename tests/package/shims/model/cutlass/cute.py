"""`cutlass.cute` as the bundled 4.6.1 model (fixtures/targets/frame_cycle_461.py, shipped in the
wheel's share/leakgate): its `kernel` and `jit` keep their own frame in a cycle."""

import importlib.util
import os

import leakgate_dsl

_path = os.path.join(os.path.dirname(leakgate_dsl.__file__), "share/leakgate/fixtures/targets/frame_cycle_461.py")
_spec = importlib.util.spec_from_file_location("leakgate_model_461", _path)
_model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_model)

kernel = _model.kernel
jit = _model.jit
