# fault: the worker stops itself (SIGSTOP) and never resumes
# run: scan --timeout 4 -- {script}
# exit: 3
# text: timed out after 4 s
import os
import signal

os.kill(os.getpid(), signal.SIGSTOP)
