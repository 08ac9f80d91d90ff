#!/usr/bin/env bash
# The GPU runs of docs/notes/gpu.md, in one go, on a machine with an NVIDIA GPU and a CUDA toolkit:
#   scripts/gpu_proof.sh [PYTHON] [OUT_DIR]
# PYTHON: the CPython to embed (default: python3; a venv's is fine, torch in it is the witness).
# Builds leakgate in build-gpu/ (tests off), then runs the gate's CUDA checks on the frame-cycle
# model, the reference runtime and the launch-path models; JSON reports and the log go to OUT_DIR.
# The build is scripts/gpu_build.sh's.
set -uo pipefail
cd "$(dirname "$0")/.."
python=${1:-$(command -v python3)}
out=${2:-gpu-out}
mkdir -p "$out"
log="$out/gpu_log.txt"
: >"$log"
step() { echo; echo "\$ $*"; "$@"; echo "[exit $?]"; } >>"$log" 2>&1

step nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
step "$python" -c 'import sys, pybind11; print(sys.version); print("pybind11", pybind11.__version__)'
step "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
step nvcc --version
step bash -c 'readlink -f "$(command -v nvcc)"; ls /usr/local/cuda/include/cuda.h "$(dirname "$(readlink -f "$(command -v nvcc)")")"/../include/cuda.h'

scripts/gpu_build.sh "$python" "$log" || exit 1
leakgate=build-gpu/leakgate

# 1. The frame-cycle model (the 4.6.1 decorators) and the reference, 1 GiB device sentinels.
step "$leakgate" gate --target fixtures/targets/frame_cycle_461.py --checks decorate,import \
    --device-sentinel-mib 1024 --json "$out/frame_cycle_461.json"
# 2. The real launch: the reference packer, then each launch-path model.
step "$leakgate" gate --target reference --checks device --json "$out/device_reference.json"
for model in uncached_packer owning_pointer_packer naive_cache_packer; do
    step "$leakgate" gate --target "fixtures/targets/launch/$model.py" --checks device,launch \
        --json "$out/device_$model.json"
done
echo "done" >>"$log"
