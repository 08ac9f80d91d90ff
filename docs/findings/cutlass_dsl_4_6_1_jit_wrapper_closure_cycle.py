"""nvidia-cutlass-dsl 4.6.1: every `cute.jit` decoration leaves its wrapper in a reference cycle.

`BaseDSL.jit_runner` (cutlass/base_dsl/dsl.py) wraps each decorated function in a nested
`jit_wrapper` that reads `jit_wrapper._name_prefix`, and attaches `set_name_prefix`, which writes
it: both name `jit_wrapper` through its closure cell, so the wrapper holds the cell (through its
`__closure__` and through `set_name_prefix`) and the cell holds the wrapper. A decorated function
that the program drops (one made per configuration in a loop, or in a factory) stays alive, with
the function it wraps and everything that function's closure holds, until the cyclic GC runs;
under gc.disable() it is never freed. One cycle per decoration: it is made in
`jit_runner_decorator`, which a call of the wrapper does not run.
4.6.3 reads and writes the prefix on the wrapped function instead, and has no cycle.

Plain Python, no leakgate: python cutlass_dsl_4_6_1_jit_wrapper_closure_cycle.py
Exit 1 while it reproduces (at least one `jit_wrapper` in cyclic garbage per decoration, and the
decorated functions' payloads alive before the collection), 0 when clean, 2 on an error. No GPU
needed: nothing is compiled.
"""
import gc
import sys
import weakref

gc.disable()

import cutlass.cute as cute  # noqa: E402

DECORATIONS = 100


class Payload:
    """What each decorated function's closure holds."""


payloads = []


def make_step(scale):
    """A kernel entry point made per configuration, as autotuners and factories do."""
    payload = Payload()
    payloads.append(weakref.ref(payload))

    def step(x):
        return payload, scale * x

    return cute.jit(step)


for scale in range(DECORATIONS):
    make_step(scale)  # dropped at once
alive = sum(ref() is not None for ref in payloads)

gc.set_debug(gc.DEBUG_SAVEALL)  # a collection keeps what it finds in gc.garbage
gc.collect()
gc.set_debug(0)
# functools.wraps gives the wrapper the wrapped function's __qualname__; its code keeps the name.
wrappers = sum(1 for o in gc.garbage if type(o).__name__ == "function" and o.__code__.co_name == "jit_wrapper")
objects = len(gc.garbage)
gc.garbage.clear()

print(f"{DECORATIONS} dropped decorations: {alive} payloads alive before the collection; it found "
      f"{wrappers} `jit_wrapper` functions among {objects} objects in cyclic garbage")
sys.exit(1 if wrappers >= DECORATIONS and alive >= DECORATIONS else 0)
