"""The GPU run of docs/notes/gpu.md, "A program that collects its own CUDA frame cycle" (issue 41):
the same under `pytest --leakgate`: a test that collects its own frame cycle of CUDA tensors is
measured (not "could not measure"), and fails naming the program's collection."""
import gc
import sys

import torch


def step():
    activations = torch.empty(1 << 27, device="cuda")  # 512 MiB
    frame = sys._getframe()


def test_step_then_collect():
    step()
    gc.collect()


def test_clean_then_collect():
    x = torch.empty(1 << 20, device="cuda")
    del x
    gc.collect()
