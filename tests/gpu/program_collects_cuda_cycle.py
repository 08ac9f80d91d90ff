"""The GPU run of docs/notes/gpu.md, "A program that collects its own CUDA frame cycle" (issue 41).

A training step whose frame keeps itself, with 1 GiB of CUDA tensors in its locals; the script
collects afterwards (gc.collect() in its own loop). leakgate measures that collection: the finding
must carry the device bytes the collection freed. Prints the oracle: what
torch.cuda.memory_allocated() dropped by at the program's collection."""
import gc
import sys

import torch

gc.disable()


def train_step():
    weights = torch.empty(1 << 28, device="cuda")  # 1 GiB of float32
    frame = sys._getframe()  # the defect: the frame in its own local
    return float(weights[0].item() * 0)


train_step()
before = torch.cuda.memory_allocated()
gc.collect()
after = torch.cuda.memory_allocated()
print(f"oracle: the program's collection freed {before - after} bytes of CUDA memory")
