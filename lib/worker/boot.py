# How a worker starts where leakgate runs as the Python package's extension module (the wheel's
# CLI): `python -B boot.py MODULE FD TOKEN`, run by the environment's own interpreter. It loads the
# extension module by its file, so nothing of leakgate's package goes on sys.path or into
# sys.modules, and hands over to the worker (lib/worker/in_interpreter.cpp), which never returns.
# Its frame stays at the bottom of the worker's stack, running; no finding names or counts it
# (scanner::setLauncherFile).
import sys
import importlib.util

spec = importlib.util.spec_from_file_location("leakgate_dsl._native", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module._worker_main(sys.argv[2], sys.argv[3])
