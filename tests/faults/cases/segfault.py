# fault: the script segfaults
# run: scan -- {script}
# exit: 3
# text: killed by signal 11
import ctypes

ctypes.string_at(0)
