"""leakgate target: JAX (`jax.jit`), the PyPI package `jax`.

The target declares `jax.jit` bare and, where the release accepts `jax.jit(**options)` as a
decorator factory (0.8.1 and later), with options (`keep_unused`, which it reads); before that
`jax.jit` takes its function first, so the release has the bare form only. JAX has no scalar
types with `__c_pointers__`, so the packer's workloads skip.

The real launch: one jitted function of an int32 and a float32, called with Python scalars and
with fresh `jnp` scalars, each call waiting for its result (`block_until_ready`), as a loop that
reads results does. JAX launches on the CPU too, so the cases run on CUDA where there is a GPU
and on the CPU otherwise (`launch_devices`).
"""

import jax
import jax.numpy as jnp

TARGET_NAME = "jax"
TARGET_PACKAGE = "jax"


def _jit_is_a_decorator_factory():
    try:
        return callable(jax.jit(keep_unused=False))
    except TypeError:  # jit() missing 1 required positional argument: 'fun'
        return False


decorators = {
    "jit": {"decorator": jax.jit, "forms": ["bare", "options"] if _jit_is_a_decorator_factory() else ["bare"],
            "options": {"keep_unused": False}},
}

launch_devices = ("cuda", "cpu")


def launch_cases(device):
    backend = jax.default_backend()
    if (device == "cuda") != (backend == "gpu"):
        raise RuntimeError(f"launch_cases({device!r}): JAX's default backend is {backend!r}")

    @jax.jit
    def leakgate_add(a, b):
        return a + b

    def launch(a, b):
        leakgate_add(a, b).block_until_ready()

    return {
        "jit(Int32, Float32) with Python scalars": {"launch": launch, "arguments": lambda: (7, 1.5)},
        "jit(Int32, Float32) with jnp scalars": {
            "launch": launch, "arguments": lambda: (jnp.int32(7), jnp.float32(1.5))},
    }
