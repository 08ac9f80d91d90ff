# fault: leakgate is stopped (SIGSTOP) while its worker sends the result, and continued past the deadline (issue 42, item 7): the result that arrived is kept
# run: scan --timeout 2 -- {script}
# send: SIGSTOP 0.5
# send: SIGCONT 4
# exit: 0
# text-absent: timed out
import time

time.sleep(1)
print("done")
