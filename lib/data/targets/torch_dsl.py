"""leakgate target: PyTorch's compilers (`torch.compile`, `torch.jit.script`), the PyPI package `torch`.

`torch.compile` is used bare and with options (`dynamic`, which it reads); it wraps the function and
compiles on the first call, so decorating needs no GPU and no compiler. `torch.jit.script` compiles
at decoration (TorchScript reads the function's source) and has no options form. torch has no
scalar types with `__c_pointers__`, so the packer's workloads skip.

The real launch: a function that fills a one-element tensor made once with an int32 plus a float32,
compiled by `torch.compile` (Inductor: a Triton kernel on CUDA, C++ on the CPU) and by
`torch.jit.script`, called with Python scalars as a loop calls it, each call waiting for the device.
CUDA where there is a GPU, else the CPU (`torch.compile` then needs a C++ compiler).

torch's PyPI wheel pulls over 2 GB of CUDA libraries: the tests do not install it; the GPU machine's
image has it (docs/notes/gpu.md).
"""

import torch

TARGET_NAME = "torch"
TARGET_PACKAGE = "torch"

decorators = {
    "compile": {"decorator": torch.compile, "forms": ["bare", "options"], "options": {"dynamic": False}},
    "jit_script": {"decorator": torch.jit.script, "forms": ["bare"]},
}

launch_devices = ("cuda", "cpu")


def _fill(out: torch.Tensor, a: int, b: float):
    out.fill_(a + b)


def launch_cases(device):
    out = torch.zeros(1, dtype=torch.float32, device=device)
    compiled = torch.compile(_fill, dynamic=False)
    scripted = torch.jit.script(_fill)
    wait = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def launch_compiled(a, b):
        compiled(out, a, b)
        wait()

    def launch_scripted(a, b):
        scripted(out, a, b)
        wait()

    # Compile here, before any measurement: Dynamo runs gc.collect(1) after every compile
    # (torch._dynamo.config.run_gc_after_compile), which would void a measured loop.
    launch_compiled(7, 1.5)
    launch_scripted(7, 1.5)
    return {
        "torch.compile(fill)(tensor, Int32, Float32) with Python scalars": {
            "launch": launch_compiled, "arguments": lambda: (7, 1.5)},
        "torch.jit.script(fill)(tensor, Int32, Float32) with Python scalars": {
            "launch": launch_scripted, "arguments": lambda: (7, 1.5)},
    }
