# fault: the script collects the garbage it made (issue 41, programs that collect)
# run: scan -- {script}
# exit: 1
# text: which the program started
# text: keep
import gc
import sys


def keep():
    frame = sys._getframe()
    return frame


keep()
gc.collect()
