# fault: the script wraps gc.collect to empty gc.garbage after each collection (issue 42, item 1)
# run: scan -- {script}
# exit: 3
# text: gc.collect was replaced
import gc
import sys

_collect = gc.collect


def collect(*args, **kwargs):
    found = _collect(*args, **kwargs)
    del gc.garbage[:]
    return found


gc.collect = collect


def keep():
    frame = sys._getframe()
    return frame


keep()
