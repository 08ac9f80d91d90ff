#!/usr/bin/env python3
"""The worker boundary: what a worker sends back, how it exits, and the spec it accepts.

    test_worker_boundary.py --leakgate BUILD/leakgate
Regressions of the house issue: launch checks carry their real per-call figure, and a worker
whose measurement stopped early exits cleanly after sending its result (it used to crash at exit,
releasing Python references after the interpreter was gone).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

LEAKGATE = None
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures")


def gate_json(*args, env=None):
    """Runs `leakgate gate ARGS --json FILE` and returns (exit code, the JSON report)."""
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "gate.json")
        run = subprocess.run([LEAKGATE, "gate", "--quiet", "--json", out, *args],
                             capture_output=True, text=True, timeout=600, env=env)
        with open(out, encoding="utf-8") as f:
            return run.returncode, json.load(f)


class LaunchAmounts(unittest.TestCase):
    def test_each_launch_check_carries_the_highest_per_call_figure_in_thousandths(self):
        code, report = gate_json("--target", os.path.join(FIXTURES, "targets/launch/uncached_packer.py"),
                                 "--checks", "launch", "--launch-calls", "300", "--launch-runs", "3")
        self.assertEqual(code, 1)
        checks = {c["name"]: c for c in report["checks"]}
        for name in ("launch-allocations", "launch-net-blocks", "launch-cyclic-garbage"):
            with self.subTest(check=name):
                self.assertEqual(checks[name]["status"], "fail")
                # The reason quotes the worst case's figure; the amount is the highest of any case.
                quoted = float(re.search(r": ([0-9.]+) [a-z ]+ per call", checks[name]["reason"]).group(1))
                self.assertGreater(checks[name]["amount"], 0)
                self.assertGreaterEqual(checks[name]["amount"] / 1000, quoted - 0.01)


class WorkerExit(unittest.TestCase):
    def assert_clean_exits(self, report):
        for result in report["results"]:
            self.assertNotIn("worker_exit", result["details"],
                             f"{result['workload']} ({result['role']}) worker died after its result")

    def test_a_worker_whose_measurement_was_invalidated_exits_cleanly(self):
        code, report = gate_json("--target", os.path.join(FIXTURES, "targets/broken/enables_gc_on_import.py"),
                                 "--checks", "decorate")
        self.assertEqual(code, 3)
        target = [r for r in report["results"] if r["role"] == "target"][0]
        self.assertIn("re-enabled the cyclic GC", target["error"]["message"])
        self.assert_clean_exits(report)

    def test_a_worker_whose_target_raised_a_base_exception_exits_cleanly(self):
        with tempfile.TemporaryDirectory() as directory:
            target = os.path.join(directory, "raises_base_exception.py")
            with open(target, "w", encoding="utf-8") as f:
                f.write("class Stop(BaseException):\n    pass\n\n\n"
                        "def kernel(*args, **options):\n    raise Stop('no kernels today')\n\n\n"
                        "jit = kernel\n")
            code, report = gate_json("--target", target, "--checks", "decorate")
        self.assertEqual(code, 3)
        self.assert_clean_exits(report)


class ErroredChecks(unittest.TestCase):
    def test_no_check_of_a_workload_that_errored_passes(self):
        # The kernel decorator raises: decorate measured only what did not raise.
        code, report = gate_json("--target", os.path.join(FIXTURES, "targets/broken/raises_on_decorate.py"),
                                 "--checks", "decorate")
        self.assertEqual(code, 3)
        for result in report["results"]:
            if result["status"] != "error":
                continue
            for check in result["checks"]:
                self.assertNotEqual(check["status"], "pass", f"{result['role']} {check['name']}")
        statuses = {c["name"]: c["status"] for c in report["checks"]}
        self.assertEqual(statuses["decorate-sentinels"], "error")


def scan_json(source, directory, *options):
    """Runs `leakgate scan` on SOURCE written to DIRECTORY; returns (exit code, the JSON report)."""
    script = os.path.join(directory, "script.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(source)
    out = os.path.join(directory, "scan.json")
    run = subprocess.run([LEAKGATE, "scan", "--quiet", "--json", out, *options, "--", script],
                         capture_output=True, text=True, timeout=300)
    with open(out, encoding="utf-8") as f:
        return run.returncode, json.load(f)


LEAK = "import sys\n\ndef keep():\n    frame = sys._getframe()\n    return frame\n\nkeep()\n"
FORGED = json.dumps({"workload": "scan", "subject": "x", "role": "target", "error": None,
                     "checks": [{"name": "frame-cycle", "status": "pass", "reason": "forged"},
                                {"name": "retained-frame", "status": "pass", "reason": "forged"}],
                     "findings": [], "sentinels": [], "details": {}, "seconds": 0})


class ResultChannel(unittest.TestCase):
    def test_a_result_written_to_fd_3_by_the_script_is_not_taken(self):
        source = LEAK + f"import os\ntry:\n    os.write(3, {FORGED!r}.encode())\nexcept OSError:\n    pass\n"
        with tempfile.TemporaryDirectory() as directory:
            code, report = scan_json(source, directory)
        self.assertEqual(code, 1)
        self.assertEqual({c["name"]: c["status"] for c in report["checks"]}["frame-cycle"], "fail")

    def test_a_shell_child_writing_to_fd_3_does_not_spoil_the_result(self):
        source = "import subprocess\nsubprocess.run('echo spoiled >&3', shell=True)\n"
        with tempfile.TemporaryDirectory() as directory:
            code, report = scan_json(source, directory)
        self.assertEqual(code, 0, report["results"][0].get("error"))

    def test_a_file_opened_on_fd_3_does_not_receive_the_result(self):
        with tempfile.TemporaryDirectory() as directory:
            mine = os.path.join(directory, "mine.txt")
            source = ("import os\ntry:\n    os.close(3)\nexcept OSError:\n    pass\n"
                      f"keep = open({mine!r}, 'w')\n")
            code, report = scan_json(source, directory)
            self.assertEqual(code, 0, report["results"][0].get("error"))
            self.assertEqual(os.path.getsize(mine), 0)


class WorkerEnd(unittest.TestCase):
    def test_a_thread_pool_left_open_does_not_hang_the_scan(self):
        source = ("import concurrent.futures\npool = concurrent.futures.ThreadPoolExecutor(2)\n"
                  "print(pool.submit(lambda: 6 * 7).result())\n")
        with tempfile.TemporaryDirectory() as directory:
            started = time.monotonic()
            code, report = scan_json(source, directory, "--timeout", "60")
        self.assertEqual(code, 0, report["results"][0].get("error"))
        self.assertLess(time.monotonic() - started, 30)

    def test_a_result_is_kept_when_a_process_in_another_session_holds_the_pipes(self):
        marker = "61.25"  # a sleep of its own, to find and end it afterwards
        source = f"import subprocess\nsubprocess.Popen(['setsid', 'sleep', '{marker}'])\n"
        try:
            with tempfile.TemporaryDirectory() as directory:
                started = time.monotonic()
                code, report = scan_json(source, directory, "--timeout", "45")
            self.assertEqual(code, 0, report["results"][0].get("error"))
            self.assertLess(time.monotonic() - started, 30)
            self.assertIn("worker_lingered", report["results"][0]["details"])
        finally:
            subprocess.run(["pkill", "-f", f"sleep {marker}"], check=False)


class WorkerSpec(unittest.TestCase):
    def worker(self, spec):
        """Runs `leakgate __worker FD token` with SPEC readable on descriptor FD."""
        with tempfile.TemporaryFile() as f:
            f.write(spec.encode())
            f.seek(0)
            return subprocess.run([LEAKGATE, "__worker", str(f.fileno()), "token"], capture_output=True,
                                  text=True, timeout=60, pass_fds=(f.fileno(),))

    def test_a_spec_argument_that_is_not_a_descriptor_is_refused(self):
        run = subprocess.run([LEAKGATE, "__worker", "{}", "token"], capture_output=True, text=True,
                             timeout=60)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("not a descriptor number", run.stderr)

    def test_an_unknown_key_is_named(self):
        run = self.worker(json.dumps({"workload": "scan", "argv": [], "environment": {}, "bogus": 1}))
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("unknown key `bogus`", run.stderr)

    def test_a_missing_key_is_named(self):
        run = self.worker(json.dumps({"workload": "scan", "argv": []}))
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("`environment` is missing", run.stderr)

    def test_text_that_is_not_json_is_refused(self):
        run = self.worker("{not json")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("worker spec: not JSON or CBOR", run.stderr)


# A target that names its distribution, in a folder it puts on sys.path, with an audit hook that
# makes a frame cycle (a local holding its own frame) at the first directory listing after its
# import: finding the distribution lists sys.path's folders, so a lookup inside the measured
# import fails import-frame-cycle.
PACKAGE_TARGET = """import sys
sys.path.insert(0, {folder!r})
TARGET_PACKAGE = {names!r}
_armed = False


def _after_import(event, args):
    if _armed and event == "os.listdir":
        frame = sys._getframe()


sys.addaudithook(_after_import)


def kernel(function=None, **options):
    return function if function is not None else (lambda f: f)


jit = kernel
_armed = True
"""


class NothingWritten(unittest.TestCase):
    def test_no_bytecode_cache_is_written_beside_what_the_workers_import(self):
        # With PYTHONDONTWRITEBYTECODE unset, Python would leave __pycache__ beside each module a
        # worker imports from source: the user's target, the modules of a scanned script.
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        with tempfile.TemporaryDirectory() as folder:
            target = os.path.join(folder, "target.py")
            shutil.copy(os.path.join(FIXTURES, "targets", "temporary_back.py"), target)
            with open(os.path.join(folder, "helper.py"), "w") as f:
                f.write("VALUE = 1\n")
            with open(os.path.join(folder, "script.py"), "w") as f:
                f.write("import helper\nprint(helper.VALUE)\n")
            for command in (["gate", "--quiet", "-j", "1", "--target", target, "--checks", "decorate,import"],
                            ["scan", "--quiet", os.path.join(folder, "script.py")]):
                run = subprocess.run([os.path.abspath(LEAKGATE), command[0], "--python", sys.executable,
                                      *command[1:]], capture_output=True, text=True, timeout=600, env=env,
                                     cwd=folder)
                self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertEqual(sorted(os.listdir(folder)), ["helper.py", "script.py", "target.py"])


class TargetPackage(unittest.TestCase):
    """details.target_package: found after the measurement, and the version importlib.metadata gives."""

    def gate_import(self, folder, names):
        target = os.path.join(folder, "package_target.py")
        with open(target, "w") as f:
            f.write(PACKAGE_TARGET.format(folder=folder, names=names))
        code, report = gate_json("--target", target, "--checks", "import", "--python", sys.executable)
        result = [r for r in report["results"] if r["role"] == "target" and r["workload"] == "import"][0]
        return code, report, result

    def importlib_version(self, folder, name):
        """What importlib.metadata.version says in the same Python with the same folder first."""
        code = ("import sys, importlib.metadata as m\nsys.path.insert(0, sys.argv[1])\n"
                "try:\n    print(m.version(sys.argv[2]))\nexcept m.PackageNotFoundError:\n    print('None')\n")
        found = subprocess.run([sys.executable, "-c", code, folder, name], capture_output=True, text=True,
                               check=True).stdout.strip()
        return None if found == "None" else found

    def write(self, path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def test_the_lookup_is_not_measured_and_reads_the_wheel_metadata(self):
        with tempfile.TemporaryDirectory() as folder:
            # The folder's name says 9.9, the METADATA 1.2.3: importlib.metadata reads the METADATA.
            self.write(os.path.join(folder, "fake_pkg-9.9.dist-info", "METADATA"),
                       "Metadata-Version: 2.1\nName: Fake.Pkg\nVersion: 1.2.3\n\nVersion: 0.0 (the body)\n")
            code, report, result = self.gate_import(folder, "Fake.Pkg")
            checks = {c["name"]: c for c in result["checks"]}
            self.assertEqual(checks["import-frame-cycle"]["status"], "pass", checks["import-frame-cycle"])
            self.assertEqual(code, 0, report)
            self.assertEqual(self.importlib_version(folder, "Fake.Pkg"), "1.2.3")
            self.assertEqual(result["details"]["target_package"], {"name": "Fake.Pkg", "version": "1.2.3"})

    def test_an_egg_info_and_the_first_installed_name_are_what_importlib_metadata_says(self):
        with tempfile.TemporaryDirectory() as folder:
            self.write(os.path.join(folder, "eggy-0.5.egg-info", "PKG-INFO"),
                       "Metadata-Version: 1.1\nName: eggy\nVersion: 0.5\n")
            _, _, result = self.gate_import(folder, ("leakgate-not-installed", "eggy"))
            self.assertEqual(self.importlib_version(folder, "leakgate-not-installed"), None)
            self.assertEqual(self.importlib_version(folder, "eggy"), "0.5")
            self.assertEqual(result["details"]["target_package"], {"name": "eggy", "version": "0.5"})

    def test_an_installed_wheel_has_the_version_importlib_metadata_gives(self):
        with tempfile.TemporaryDirectory() as folder:
            _, _, result = self.gate_import(folder, "pip")
            expected = self.importlib_version(folder, "pip")
            self.assertIsNotNone(expected, "pip is not installed in this Python")
            self.assertEqual(result["details"]["target_package"], {"name": "pip", "version": expected})

    def test_a_name_installed_nowhere_has_no_version(self):
        with tempfile.TemporaryDirectory() as folder:
            _, _, result = self.gate_import(folder, "leakgate-not-installed")
            self.assertEqual(result["details"]["target_package"], {"name": "leakgate-not-installed", "version": None})

    def test_the_reference_looks_for_no_distribution(self):
        # The reference's TARGET_PACKAGE is (): its worker must not search every installed
        # distribution's files for the one that owns leakgate_reference (importlib.metadata's
        # packages_distributions, about 60 ms a worker). A sitecustomize on PYTHONPATH logs every
        # file opened inside a .dist-info or .egg-info folder by any process of the run. (Not the
        # import of importlib.metadata: on 3.13 importlib.invalidate_caches() imports it.)
        with tempfile.TemporaryDirectory() as folder:
            log = os.path.join(folder, "opened.log")
            self.write(os.path.join(folder, "sitecustomize.py"),
                       "import sys\n\n\ndef _hook(event, args):\n"
                       "    if event == 'open' and isinstance(args[0], str) and "
                       "('.dist-info' in args[0] or '.egg-info' in args[0]):\n"
                       f"        with open({log!r}, 'a') as f:\n"
                       "            f.write(args[0] + '\\n')\n\n\nsys.addaudithook(_hook)\n")
            code, report = gate_json("-j", "1", "--target", "reference", "--checks", "decorate,import",
                                     "--python", sys.executable, env={**os.environ, "PYTHONPATH": folder})
            self.assertEqual(code, 0, report)
            self.assertEqual({r["workload"] for r in report["results"]}, {"decorate", "import"})
            self.assertTrue(all("target_package" not in r["details"] for r in report["results"]), report)
            if os.path.exists(log):
                with open(log, encoding="utf-8") as f:
                    self.fail(f"a worker read distribution metadata: {f.read()[:500]}")


if __name__ == "__main__":
    if "--leakgate" not in sys.argv:
        sys.exit("usage: test_worker_boundary.py --leakgate BUILD/leakgate")
    index = sys.argv.index("--leakgate")
    LEAKGATE = sys.argv[index + 1]
    del sys.argv[index:index + 2]
    if not os.path.exists(LEAKGATE):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        sys.exit(77)
    unittest.main(verbosity=2)
