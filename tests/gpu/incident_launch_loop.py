"""The second incident in a user's loop, with no leakgate sentinel in it (docs/notes/gpu.md, issue 41).

A kernel compiled once with the real `cute.compile`, then launched N times (default 3000) with
fresh scalars, as a training loop calls it under gc.disable(). On nvidia-cutlass-dsl 4.4.2 and
4.6.1 each launch packs its scalars with ctypes.cast(ctypes.pointer(...)), which leaves a few
cycles of ctypes objects per launch. `--check` prints what plain Python sees: the objects a
collection finds afterwards.
"""
import gc
import sys

import cutlass
import cutlass.cute as cute


@cute.kernel
def loop_kernel(a: cutlass.Int32, b: cutlass.Float32):
    pass


@cute.jit
def loop_host(a: cutlass.Int32, b: cutlass.Float32):
    loop_kernel(a, b).launch(grid=(1, 1, 1), block=(1, 1, 1))


launches = int(next((a for a in sys.argv[1:] if a.isdigit()), "3000"))
compiled = cute.compile(loop_host, cutlass.Int32(1), cutlass.Float32(1.0))
gc.collect()
gc.disable()
for step in range(launches):
    compiled(cutlass.Int32(step), cutlass.Float32(1.5))
if "--check" in sys.argv:
    print(f"{launches} launches: a collection finds {gc.collect()} objects")
