#!/usr/bin/env python3
"""The Python package on a real GPU (docs/notes/gpu.md): device sentinels and a tracked torch CUDA tensor
in a region, on the bundled 4.6.1 model and on its fixed counterpart.

    python3 tests/package/gpu_proof.py BUILD_DIR OUT.json

BUILD_DIR: a CMake build of this tree for this interpreter (scripts/gpu_proof.sh makes build-gpu/);
its extension module and package/leakgate_dsl/ are staged into a temporary folder and imported
from there (the GPU machine has no pip index, so no wheel is built there). torch is optional: without
it only leakgate's own device sentinel is placed.
"""

import glob
import importlib.util
import json
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GIB = 1 << 30


def stage(build):
    folder = tempfile.mkdtemp(prefix="leakgate-gpu-")
    package = os.path.join(folder, "leakgate_dsl")
    shutil.copytree(os.path.join(ROOT, "package/leakgate_dsl"), package)
    modules = glob.glob(os.path.join(build, "package/leakgate_dsl/_native*.so"))
    if not modules:
        sys.exit(f"no extension module in {build}/package/leakgate_dsl: build the tree first")
    shutil.copy(modules[0], package)
    sys.path.insert(0, folder)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    build, out = sys.argv[1:3]
    stage(build)
    import leakgate_dsl

    try:
        import torch
        cuda_tensor = torch.cuda.is_available()
    except ImportError:
        torch, cuda_tensor = None, False
    models = {"frame_cycle_461": load(os.path.join(ROOT, "fixtures/targets/frame_cycle_461.py"), "m461"),
              "temporary_back": load(os.path.join(ROOT, "fixtures/targets/temporary_back.py"), "fixed")}

    def user_code(dsl):
        device = leakgate_dsl.device_sentinel("device", GIB)  # cuMemAlloc, 1 GiB
        if cuda_tensor:
            tensor = leakgate_dsl.track(torch.empty(GIB // 4, dtype=torch.float32, device="cuda"), "torch")

        @dsl.kernel
        def kernel():
            pass

    report = {"cuda": leakgate_dsl.cuda_status(), "torch": torch.__version__ if torch else None}
    for name, dsl in models.items():
        result = leakgate_dsl.measure(user_code, dsl)
        report[name] = {"valid": result.valid, "checks": {c.name: [c.status, c.reason] for c in result.checks},
                        "sentinels": [[s.label, s.kind, s.bytes, s.verdict] for s in result.sentinels],
                        "details": result.details, "text": result.text}
        print(result.text)
    with open(out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
