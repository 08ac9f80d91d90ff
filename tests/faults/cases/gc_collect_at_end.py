# fault: the script collects the garbage it made (item 2)
# run: scan -- {script}
# exit: 3
# text: collect
import gc
import sys


def keep():
    frame = sys._getframe()
    return frame


keep()
gc.collect()
