"""leakgate target: NVIDIA Warp (`warp.kernel`, `warp.func`, `warp.func_native`, `warp.struct`), the
PyPI package `warp-lang`.

Warp's decorators do not fit `kernel`/`jit` bare and with options, so the target declares them:
`warp.kernel` bare and with options (`enable_backward`, which it reads), `warp.func` bare,
`warp.func_native` called with its C++ snippet (it has no bare form; from 0.11.0, and declared
only where the release has it), and `warp.struct`, a class decorator. Importing Warp and
decorating need no GPU; `launch_cases` calls `wp.init()`, which releases before 1.2 need before
a launch (later ones call it themselves).

The real launch: a kernel that stores an int32 plus a float32 into a one-element array made once,
launched with `warp.launch` as a loop launches it, with Python scalars and with fresh `wp.int32` /
`wp.float32` objects. Warp launches on the CPU too (its own compiler, at the first launch), so the
cases run on CUDA where there is a GPU and on the CPU otherwise.
"""

import warp as wp

TARGET_NAME = "warp"
TARGET_PACKAGE = "warp-lang"

wp.config.quiet = True

decorators = {
    "kernel": {"decorator": wp.kernel, "forms": ["bare", "options"], "options": {"enable_backward": False}},
    "func": {"decorator": wp.func, "forms": ["bare"]},
    "struct": {"decorator": wp.struct, "forms": ["class"]},
}
if hasattr(wp, "func_native"):  # from 0.11.0
    decorators["func_native"] = {"decorator": wp.func_native, "forms": ["arguments"], "arguments": ("",)}

launch_devices = ("cuda", "cpu")


@wp.kernel
def leakgate_add(out: wp.array(dtype=wp.float32), a: wp.int32, b: wp.float32):
    out[0] = wp.float32(a) + b


def launch_cases(device):
    wp.init()
    where = "cuda:0" if device == "cuda" else "cpu"
    out = wp.zeros(1, dtype=wp.float32, device=where)

    def launch(a, b):
        wp.launch(leakgate_add, dim=1, inputs=[out, a, b], device=where)

    return {
        "wp.launch(add, Int32, Float32) with Python scalars": {"launch": launch, "arguments": lambda: (7, 1.5)},
        "wp.launch(add, Int32, Float32) with wp scalars": {
            "launch": launch, "arguments": lambda: (wp.int32(7), wp.float32(1.5))},
    }
