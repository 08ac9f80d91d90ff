"""`cutlass.cute` as leakgate's reference runtime (lib/data/reference, shipped in the wheel's
share/leakgate): decorators that keep no frame."""

import os
import sys

import leakgate_dsl

sys.path.insert(0, os.path.join(os.path.dirname(leakgate_dsl.__file__), "share/leakgate/lib/data/reference"))
from leakgate_reference import jit, kernel  # noqa: E402

del sys.path[0]
