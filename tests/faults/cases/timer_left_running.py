# fault: the script leaves an interval timer whose handler raises (issue 42, item 7): the timer is stopped at the script's end, the reads are not disturbed
# run: scan -- {script}
# exit: 0
# text-absent: leakgate's harness
# text-absent: Alarm
import signal


class Alarm(Exception):
    pass


def ring(signum, frame):
    raise Alarm("the script's timer fired")


signal.signal(signal.SIGALRM, ring)
signal.setitimer(signal.ITIMER_REAL, 0.05, 0.001)
