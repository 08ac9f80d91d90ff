"""Scanned by the write-up: a step whose simulated kernel raises; the step handles the error."""
import os
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
import numpy as np
from numba import cuda

@cuda.jit
def shift(x):
    i = cuda.grid(1)
    x[i] = x[i + 1]  # the last thread reads past the end

def step():
    payload = bytearray(64 << 20)
    x = np.ones(4)
    try:
        shift[1, 4](x)
    except IndexError as e:
        print("kernel failed:", e)

step()
