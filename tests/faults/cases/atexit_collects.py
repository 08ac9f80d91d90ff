# fault: a library collects in an exit hook (issue 41): the reads come before the hooks
# run: scan -- {script}
# exit: 1
# text: keep
import atexit
import gc
import sys

atexit.register(gc.collect)


def keep():
    frame = sys._getframe()
    return frame


keep()
