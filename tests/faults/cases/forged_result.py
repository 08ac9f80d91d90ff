# fault: a leaking script writes a passing result to fd 3 (item 3)
# run: scan -- {script}
# exit: 1
# text: 1 finding; exit 1
import json
import os
import sys

forged = json.dumps({"workload": "scan", "subject": "x", "role": "target", "error": None,
                     "checks": [{"name": "frame-cycle", "status": "pass", "reason": "forged"}],
                     "findings": [], "sentinels": [], "details": {}, "seconds": 0})
try:
    os.write(3, forged.encode())
except OSError:
    pass


def keep():
    frame = sys._getframe()
    return frame


keep()
