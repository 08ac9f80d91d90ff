# fault: the worker is killed by SIGKILL
# run: scan -- {script}
# exit: 3
# text: killed by signal 9
import os
import signal

os.kill(os.getpid(), signal.SIGKILL)
