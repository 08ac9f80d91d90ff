#!/usr/bin/env python3
"""Signals: SIGINT, SIGTERM and SIGHUP sent to a real leakgate while its worker runs an endless
loop. leakgate must kill the worker's process group, leave no report file behind and exit 130,
143 or 129. Checked through /proc: no process of the worker's group survives.

    test_signals.py --leakgate BUILD/leakgate
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

LEAKGATE = None


def processes_in_group(group):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields: state ppid pgrp ...; a zombie has already died
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(entry))
    return found


def worker_of(parent, timeout=30):
    """The pid of leakgate's worker (a child running `leakgate __worker`), once it runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            if ppid == parent and b"__worker" in cmdline:
                return int(entry)
        time.sleep(0.05)
    raise AssertionError("no worker started")


class Signals(unittest.TestCase):
    def run_and_signal(self, signum, expected_exit):
        with tempfile.TemporaryDirectory() as directory:
            script = os.path.join(directory, "spins.py")
            with open(script, "w") as f:
                f.write("import time\nwhile True:\n    time.sleep(0.01)\n")
            report = os.path.join(directory, "report.json")
            leakgate = subprocess.Popen([LEAKGATE, "scan", "--json", report, "--", script],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                worker = worker_of(leakgate.pid)
                time.sleep(0.5)  # let the worker reach the endless loop
                self.assertTrue(processes_in_group(worker), "the worker is not in a group of its own")
                leakgate.send_signal(signum)
                code = leakgate.wait(timeout=30)
            finally:
                if leakgate.poll() is None:
                    leakgate.kill()
            self.assertEqual(code, expected_exit)
            deadline = time.monotonic() + 5
            while processes_in_group(worker) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(processes_in_group(worker), [], "the worker's group outlived leakgate")
            self.assertEqual(sorted(os.listdir(directory)), ["spins.py"], "a report file was left behind")

    def test_sigint_kills_the_worker_and_exits_130(self):
        self.run_and_signal(signal.SIGINT, 130)

    def test_sigterm_kills_the_worker_and_exits_143(self):
        self.run_and_signal(signal.SIGTERM, 143)

    def test_sighup_kills_the_worker_and_exits_129(self):
        self.run_and_signal(signal.SIGHUP, 129)


if __name__ == "__main__":
    index = sys.argv.index("--leakgate")
    LEAKGATE = sys.argv[index + 1]
    del sys.argv[index:index + 2]
    if not os.path.exists(LEAKGATE):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        sys.exit(77)
    unittest.main(verbosity=2)
