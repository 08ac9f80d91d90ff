"""Scanned by the write-up: a training step whose Warp kernel fails to build; the step skips it."""
import warp as wp
wp.config.quiet = True

@wp.kernel
def broken(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = no_such_function(x[i])

def step():
    payload = bytearray(64 << 20)
    x = wp.zeros(8, dtype=float, device="cpu")
    try:
        wp.launch(broken, dim=8, inputs=[x], device="cpu")
    except Exception as e:
        print("launch failed:", type(e).__name__)

step()
