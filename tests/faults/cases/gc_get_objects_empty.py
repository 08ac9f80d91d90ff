# fault: the script makes gc.get_objects() return nothing (issue 42, item 1)
# run: scan -- {script}
# exit: 3
# text: gc.get_objects was replaced
import gc
import sys

gc.get_objects = lambda generation=None: []


def remember(store=[]):
    store.append(sys._getframe())


remember()
