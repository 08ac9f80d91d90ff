"""Scanned by the write-up: one `cute.jit` per configuration, then the configurations dropped."""
import cutlass.cute as cute


def make_step(scale):
    def step(x):
        return scale * x

    return cute.jit(step)


steps = [make_step(scale) for scale in range(200)]
steps.clear()  # a new set of configurations replaces the old one
