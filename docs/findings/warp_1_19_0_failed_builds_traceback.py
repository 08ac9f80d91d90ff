"""Warp 1.19.0: a module whose build failed keeps the error, its traceback and the frames in it.

`Module._record_build_failure` (warp/_src/context.py) stores the exception that failed a module's
build in `Module.failed_builds`, so that later launches re-raise it without rebuilding. The
stored object is the exception that goes on to propagate to the caller, so by the time the caller
has handled it, its `__traceback__` runs through every frame between the build and the `except`:
the caller's frame and what its locals hold stay alive, with the module, until the module is
modified or the program ends. No collection frees them: they are held, not in a cycle.

Plain Python, no leakgate: python warp_1_19_0_failed_builds_traceback.py
Exit 1 while it reproduces (the payload of the function that launched the kernel outlives the
function, and `failed_builds` holds it), 0 when clean, 2 on an error. Runs on the CPU.
"""
import gc
import sys
import weakref

import warp as wp

wp.config.quiet = True


@wp.kernel
def broken(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = no_such_function(x[i])  # noqa: F821 -- the build fails here, as intended


class Payload:
    """What the launching function holds: 64 MiB a user would not expect to outlive it."""

    def __init__(self):
        self.data = bytearray(64 << 20)


def step():
    payload = Payload()
    x = wp.zeros(8, dtype=float, device="cpu")
    try:
        wp.launch(broken, dim=8, inputs=[x], device="cpu")
    except Exception as error:  # what a training loop that skips a bad step does
        print(f"launch failed: {type(error).__name__}")
    return weakref.ref(payload)


payload = step()
gc.collect()
module = broken.module
stored = [e for e in (module.failed_builds.values() if isinstance(module.failed_builds, dict) else ())
          if isinstance(e, BaseException)]
alive = payload() is not None
errors = len(stored)
with_traceback = sum(e.__traceback__ is not None for e in stored)
del stored  # our own reference to the errors must not keep the payload
module.failed_builds.clear()
gc.collect()
freed = payload() is None

print(f"after step() returned and a full collection: its 64 MiB payload is "
      f"{'alive' if alive else 'freed'}; Module.failed_builds holds {errors} exception(s), "
      f"{with_traceback} with a traceback; emptying failed_builds frees the payload: {freed}")
sys.exit(1 if alive and with_traceback and freed else 0)
