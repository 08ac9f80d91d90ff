#!/usr/bin/env python3
"""Signals: SIGINT, SIGTERM and SIGHUP sent to a real leakgate while its worker runs an endless
loop. leakgate must kill the worker's process group, leave no report file and no temporary file
behind (the run's scratch directory, the workers' TMPDIR, goes with it) and exit 130, 143 or 129.
Checked through /proc: no process of the worker's group survives. A worker killed at its timeout
leaves no temporary file either.

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


# The script leaves temporary files, a directory of them and a note of where they went, then spins.
SPINS = """import os, sys, tempfile, time
os.close(tempfile.mkstemp()[0])
nested = tempfile.mkdtemp()
os.makedirs(os.path.join(nested, "a", "b"))
open(os.path.join(nested, "a", "b", "file"), "w").close()
with open(sys.argv[1], "w") as note:
    note.write(tempfile.gettempdir())
while True:
    time.sleep(0.01)
"""


def environment_with_tmpdir(tmpdir):
    env = dict(os.environ)
    env["TMPDIR"] = tmpdir
    return env


class Signals(unittest.TestCase):
    def check_scratch(self, directory, tmpdir):
        """The workers' temporary files went under the run's scratch directory, in TMPDIR, and
        nothing of it is left."""
        with open(os.path.join(directory, "note")) as f:
            where = f.read()
        self.assertTrue(where.startswith(os.path.join(tmpdir, "leakgate-run-")), where)
        self.assertEqual(os.listdir(tmpdir), [], "the run's scratch directory was left behind")

    def run_and_signal(self, signum, expected_exit):
        with tempfile.TemporaryDirectory() as directory, tempfile.TemporaryDirectory() as tmpdir:
            script = os.path.join(directory, "spins.py")
            with open(script, "w") as f:
                f.write(SPINS)
            report = os.path.join(directory, "report.json")
            note = os.path.join(directory, "note")
            leakgate = subprocess.Popen([LEAKGATE, "scan", "--json", report, "--", script, note],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        env=environment_with_tmpdir(tmpdir))
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
            self.assertEqual(sorted(os.listdir(directory)), ["note", "spins.py"],
                             "a report file was left behind")
            self.check_scratch(directory, tmpdir)

    def test_sigint_kills_the_worker_and_exits_130(self):
        self.run_and_signal(signal.SIGINT, 130)

    def test_sigterm_kills_the_worker_and_exits_143(self):
        self.run_and_signal(signal.SIGTERM, 143)

    def test_sighup_kills_the_worker_and_exits_129(self):
        self.run_and_signal(signal.SIGHUP, 129)

    def test_a_worker_killed_at_its_timeout_leaves_no_temporary_file(self):
        with tempfile.TemporaryDirectory() as directory, tempfile.TemporaryDirectory() as tmpdir:
            script = os.path.join(directory, "spins.py")
            with open(script, "w") as f:
                f.write(SPINS)
            note = os.path.join(directory, "note")
            done = subprocess.run([LEAKGATE, "scan", "-q", "--timeout", "3", "--", script, note],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=environment_with_tmpdir(tmpdir), timeout=120)
            self.assertEqual(done.returncode, 3)  # errored: the script never finished
            self.check_scratch(directory, tmpdir)


if __name__ == "__main__":
    index = sys.argv.index("--leakgate")
    LEAKGATE = sys.argv[index + 1]
    del sys.argv[index:index + 2]
    if not os.path.exists(LEAKGATE):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        sys.exit(77)
    unittest.main(verbosity=2)
