# fault: a bounded fork bomb: 40 processes in its group that outlive the script
# run: scan -- {script}
# exit: 0
import os
import time

for _ in range(40):
    if os.fork() == 0:
        time.sleep(600)
        os._exit(0)
