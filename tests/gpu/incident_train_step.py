"""The first incident's shape, with no leakgate sentinel in it (docs/notes/gpu.md, issue 41).

`train_step` holds 2 GiB of CUDA tensors and calls `forward`, which holds 1 GiB and imports a
kernel module lazily; that module decorates a kernel with the real `cute.kernel`. On
nvidia-cutlass-dsl 4.6.1 the decorator keeps its own frame in a cycle (`current_frame` of
`CuTeDSL.kernel`), whose f_back chain pins `forward` and `train_step` with their tensors. Run it
under `leakgate scan`; run it with `--check` to print what plain Python sees: the CUDA memory
still allocated after `train_step` returned, and after `gc.collect()`.
"""
import gc
import os
import sys
import tempfile

import torch

KERNELS = '''
import cutlass
import cutlass.cute as cute


@cute.kernel
def incident_scale(a: cutlass.Int32, b: cutlass.Float32):
    pass
'''


def forward(batch):
    activations = torch.empty(256 << 20, dtype=torch.float32, device="cuda")  # 1 GiB
    import incident_kernels  # lazily, with the tensors on the stack

    return batch.numel() + activations.numel() + len(incident_kernels.__name__)


def train_step():
    weights = torch.empty(512 << 20, dtype=torch.float32, device="cuda")  # 2 GiB
    return forward(weights)


folder = tempfile.mkdtemp(prefix="incident-kernels-")
with open(os.path.join(folder, "incident_kernels.py"), "w") as f:
    f.write(KERNELS)
sys.path.insert(0, folder)
gc.disable()
train_step()
torch.cuda.synchronize()
if "--check" in sys.argv:
    print(f"after train_step: {torch.cuda.memory_allocated() / 2**30:.2f} GiB allocated")
    gc.collect()
    print(f"after gc.collect(): {torch.cuda.memory_allocated() / 2**30:.2f} GiB allocated")
