"""The regression test the incident report asked nvidia-cutlass-dsl for: with gc.disable(),
decorate inside a function holding a weakref-checked local, and assert that the local is freed
without gc.collect(). Fails on 4.6.1 (`CuTeDSL.kernel` keeps its own frame in a cycle, and through
f_back this test's frame with `tensor`), passes on 4.4.2.

    pip install leakgate-dsl nvidia-cutlass-dsl==4.6.1 pytest && pytest examples/
"""

import cutlass.cute as cute
import pytest


@pytest.mark.leakgate(frame_cycles=0, sentinels="freed-by-refcount")
def test_decorating_frees_the_callers_locals(leakgate):
    tensor = leakgate.sentinel("tensor", 64 << 20)  # the caller's data: 64 MiB it must not pin

    @cute.kernel
    def kernel():
        pass
