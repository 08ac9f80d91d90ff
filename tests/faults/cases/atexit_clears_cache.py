# fault: a library empties its cache in an exit hook (issue 41): what it kept is still reported
# run: scan -- {script}
# exit: 1
# text: retained-frame
# text: _CACHE
# text: ran after the reads and freed
import atexit
import sys

_CACHE = []
atexit.register(_CACHE.clear)


def remember():
    _CACHE.append(sys._getframe())


remember()
