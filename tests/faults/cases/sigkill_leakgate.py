# fault: SIGKILL to leakgate while its worker spins (issue 42, item 4): the worker notices and ends its group
# run: scan -- {script}
# send: SIGKILL 3
# exit: -9
import time

while True:
    time.sleep(0.1)
