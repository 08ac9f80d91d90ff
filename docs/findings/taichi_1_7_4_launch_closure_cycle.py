"""taichi 1.7.4: every kernel launch leaves a reference cycle (a recursive nested function).

`Kernel.launch_kernel` (taichi/lang/kernel_impl.py) defines `recursive_set_args`, which calls
itself by name: the function holds its closure cell and the cell holds the function, so each
launch leaves the function, its 12 cells and what they hold (the launch's argument setters and
launch context) for the cyclic GC. Under gc.disable() nothing frees them.

Plain Python, no leakgate: python taichi_1_7_4_launch_closure_cycle.py
Exit 1 while it reproduces (at least one cycle through `recursive_set_args` per launch), 0 when
clean, 2 on an error. Runs on the CPU backend.
"""
import gc
import sys

gc.disable()

import numpy as np  # noqa: E402
import taichi as ti  # noqa: E402

LAUNCHES = 1000

ti.init(arch=ti.cpu, log_level=ti.WARN)


@ti.kernel
def scale(a: ti.f32, x: ti.types.ndarray()):
    for i in x:
        x[i] = a * x[i]


data = np.ones(1024, dtype=np.float32)
scale(1.0, data)  # compiles: what compiling leaves is not counted
gc.collect()
gc.garbage.clear()

gc.set_debug(gc.DEBUG_SAVEALL)  # a collection keeps what it finds in gc.garbage
for _ in range(LAUNCHES):
    scale(1.0, data)
gc.collect()
gc.set_debug(0)
setters = sum(1 for o in gc.garbage
              if type(o).__name__ == "function" and o.__qualname__.endswith("launch_kernel.<locals>.recursive_set_args"))
objects = len(gc.garbage)
gc.garbage.clear()

print(f"{LAUNCHES} launches left {objects} objects in cyclic garbage, {setters} of them "
      f"`Kernel.launch_kernel.<locals>.recursive_set_args`")
sys.exit(1 if setters >= LAUNCHES else 0)
