# fault: the script's own sentinel sits in a frame cycle that the script then collects (issue 41, programs that collect): the collection freed it, so it was pinned until a collection: freed-by-gc-only, not freed-by-refcount, and not an error
# run: scan -- {script}
# exit: 1
# text: freed by a collection the program started
# text: freed-by-gc-only
# text-absent: freed-by-refcount
# text-absent: not measured
import gc
import sys

import _leakgate


def step():
    buffer = _leakgate.sentinel("buffer", 1 << 20)
    frame = sys._getframe()  # the defect: the frame in its own local
    return None


step()
gc.collect()
