# fault: the script makes gc.set_debug a no-op, so nothing would be saved (issue 42, item 1)
# run: scan -- {script}
# exit: 3
# text: gc.set_debug was replaced
import gc
import sys

gc.set_debug = lambda flags: None


def keep():
    frame = sys._getframe()
    payload = bytearray(32 << 20)
    return frame


keep()
