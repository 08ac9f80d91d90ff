# fault: the script restarts itself with os.execv (a daemon's or a reloader's self-restart), replacing the worker's process before leakgate's reads (issue 42, item 7): the result says which call it was, not only "exited without a result"
# run: scan -- {script}
# exit: 3
# text: called os.exec*() of /bin/true
import os

os.execv("/bin/true", ["true"])
