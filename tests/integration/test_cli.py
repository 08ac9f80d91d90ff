#!/usr/bin/env python3
"""The CLI's contract: exit codes for bad usage, --python environments, machine output.

    test_cli.py --leakgate BUILD/leakgate
Runs with the Python the build embeds (the CTest entry passes it).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

LEAKGATE = None
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures")


def leakgate(*args, **kwargs):
    return subprocess.run([LEAKGATE, *args], capture_output=True, text=True, timeout=300, **kwargs)


class UsageErrors(unittest.TestCase):
    def test_a_missing_script_is_a_usage_error(self):
        run = leakgate("scan", "--", "/nonexistent/script.py")
        self.assertEqual(run.returncode, 2)
        self.assertIn("leakgate: cannot read script", run.stderr)

    def test_inputs_that_measure_nothing_are_usage_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = leakgate("scan", "--", tmp)
            self.assertEqual(run.returncode, 2)
            self.assertIn("is a directory", run.stderr)
            run = leakgate("lint", tmp)
            self.assertEqual(run.returncode, 2)
            self.assertIn("no Python or C/C++ source", run.stderr)
        run = leakgate("scan", "--", "/dev/zero")
        self.assertEqual(run.returncode, 2)
        self.assertIn("not a regular file", run.stderr)

    def test_an_unknown_option_is_a_usage_error(self):
        self.assertEqual(leakgate("scan", "--no-such-option", "--", "x.py").returncode, 2)

    def test_an_unknown_target_or_check_is_a_usage_error(self):
        run = leakgate("gate", "--target", "no-such-target")
        self.assertEqual(run.returncode, 2)
        self.assertIn("unknown target", run.stderr)
        run = leakgate("gate", "--target", "reference", "--checks", "decorate-nonsense")
        self.assertEqual(run.returncode, 2)
        self.assertIn("unknown check", run.stderr)

    def test_a_python_of_another_version_names_both_versions(self):
        embedded = "%d.%d" % sys.version_info[:2]
        others = [f"/root/.pyenv/versions/{v}" for v in ("3.10.13", "3.11.7", "3.12.1", "3.13.0")
                  if not v.startswith(embedded + ".")]
        other = next((p + "/bin/python3" for p in others if os.path.exists(p + "/bin/python3")), None)
        if other is None:
            self.skipTest("no CPython of another version on this machine")
        run = leakgate("scan", "--python", other, "--", os.path.join(FIXTURES, "scan", "clean_sys_exit_zero.py"))
        self.assertEqual(run.returncode, 2)
        self.assertIn(f"embeds Python {embedded}", run.stderr)
        self.assertRegex(run.stderr, r"is Python 3\.\d+\.\d+")


class Spelling(unittest.TestCase):
    def test_a_mistyped_subcommand_names_the_closest_one(self):
        run = leakgate("gat")
        self.assertEqual(run.returncode, 2)
        self.assertIn("unknown subcommand `gat` (did you mean `gate`?); the subcommands are scan, gate, "
                      "lint, bisect, merge, cache", run.stderr)
        run = leakgate("frobnicate")
        self.assertEqual(run.returncode, 2)
        self.assertNotIn("did you mean", run.stderr)

    def test_a_nested_subcommand_takes_its_own_options(self):
        run = leakgate("cache", "prune", "--keep-wheel")
        self.assertEqual(run.returncode, 2)
        self.assertIn("unknown option `--keep-wheel` for `prune` (did you mean `--keep-wheels`?)", run.stderr)

    def test_a_mistyped_option_names_the_closest_one_of_its_subcommand(self):
        run = leakgate("gate", "--soak-second", "3")
        self.assertEqual(run.returncode, 2)
        self.assertIn("unknown option `--soak-second` for `gate` (did you mean `--soak-seconds`?)", run.stderr)
        run = leakgate("lint", "--compile-comands=x", "y.py")
        self.assertIn("(did you mean `--compile-commands`?)", run.stderr)

    def test_a_value_out_of_range_gets_a_short_message(self):
        run = leakgate("gate", "--soak-seconds", "0")
        self.assertEqual(run.returncode, 2)
        self.assertIn("--soak-seconds: must be more than 0, not 0", run.stderr)
        self.assertLess(len(run.stderr), 200, run.stderr)
        run = leakgate("gate", "--soak-steps", "-1")
        self.assertIn("must be 0 or more, not -1", run.stderr)

    def test_global_options_work_after_the_subcommand(self):
        run = leakgate("gate", "--target", "reference", "--checks", "import", "--version")
        self.assertEqual(run.returncode, 0)
        self.assertRegex(run.stdout, r"^leakgate [0-9.]+ \(Python 3\.[0-9]+\)")
        run = leakgate("gate", "--target", "reference", "--checks", "import", "-v")
        self.assertEqual(run.returncode, 0, run.stderr)


class Colour(unittest.TestCase):
    """no-color.org: a non-empty NO_COLOR turns colour off; an empty one does not."""

    def on_a_terminal(self, *args, env):
        import pty
        main, secondary = pty.openpty()
        try:
            run = subprocess.run([LEAKGATE, "gate", "--target", "reference", "--checks", "import", *args],
                                 stdout=secondary, stderr=subprocess.DEVNULL, timeout=300,
                                 env=dict(os.environ, **env))
            os.close(secondary)
            secondary = None
            chunks = []
            while True:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the terminal closed
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            self.assertEqual(run.returncode, 0)
            return b"".join(chunks).decode()
        finally:
            os.close(main)
            if secondary is not None:
                os.close(secondary)

    def test_no_color_and_the_color_option(self):
        self.assertIn("\x1b[", self.on_a_terminal(env={"NO_COLOR": ""}))
        self.assertNotIn("\x1b[", self.on_a_terminal(env={"NO_COLOR": "1"}))
        self.assertIn("\x1b[", self.on_a_terminal("--color", "always", env={"NO_COLOR": "1"}))
        self.assertNotIn("\x1b[", self.on_a_terminal("--color", "never", env={"NO_COLOR": ""}))
        self.assertNotIn("\x1b[", self.on_a_terminal("--no-color", env={"NO_COLOR": ""}))
        # Not a terminal: no colour unless asked.
        self.assertNotIn("\x1b[", leakgate("gate", "--target", "reference", "--checks", "import").stdout)
        self.assertIn("\x1b[", leakgate("gate", "--target", "reference", "--checks", "import",
                                         "--color", "always").stdout)
        run = leakgate("gate", "--color", "sometimes")
        self.assertEqual(run.returncode, 2)
        self.assertIn("--color: sometimes not in {auto,always,never}", run.stderr)


class WhatTheTargetWrites(unittest.TestCase):
    TARGET = (
        "def deep(n):\n"
        "    if n == 0:\n"
        "        raise RuntimeError('\\x1b[31mred\\x1b[0m and \\x1b]0;title\\x07plain')\n"
        "    deep(n - 1)\n"
        "deep(20)\n")

    def test_escapes_of_the_code_under_test_are_stripped_unless_colour_is_asked(self):
        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, "colours.py")
            with open(target, "w") as f:
                f.write(self.TARGET)
            plain = leakgate("gate", "--target", target, "--checks", "import", "--no-color")
            self.assertEqual(plain.returncode, 3, plain.stderr)
            self.assertNotIn("\x1b", plain.stdout)
            self.assertIn("red and plain", plain.stdout)
            coloured = leakgate("gate", "--target", target, "--checks", "import", "--color", "always")
            self.assertIn("\x1b[31mred", coloured.stdout)
            # The traceback's last lines, the rest folded (all of it in the JSON).
            self.assertRegex(plain.stdout, r"\| \.\.\. [0-9]+ lines before these \(all in the JSON report\)")
            self.assertLess(plain.stdout.count("line 4, in deep"), 8)


class Invocation(unittest.TestCase):
    def test_sarif_names_the_command_line_and_each_workload_that_could_not_measure(self):
        with tempfile.TemporaryDirectory() as tmp:
            sarif = os.path.join(tmp, "out.sarif")
            target = os.path.join(FIXTURES, "targets", "broken", "raises_on_decorate.py")
            run = leakgate("gate", "--quiet", "--target", target, "--checks", "decorate", "--sarif", sarif)
            self.assertEqual(run.returncode, 3, run.stderr)
            with open(sarif) as f:
                invocation = json.load(f)["runs"][0]["invocations"][0]
            self.assertEqual(invocation["arguments"][:3], ["gate", "--quiet", "--target"])
            self.assertIn("--checks decorate", invocation["commandLine"])
            self.assertFalse(invocation["executionSuccessful"])
            notes = invocation["toolExecutionNotifications"]
            self.assertEqual([note["properties"]["workload"] for note in notes], ["decorate"])
            self.assertIn("the target raised while decorating", notes[0]["message"]["text"])


class ScanModule(unittest.TestCase):
    def test_scan_m_runs_a_module_as_python_m_does(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "leaky_module.py"), "w") as f:
                f.write("import json, sys\n"
                        "print(json.dumps([sys.argv, __name__, __spec__.name]), file=sys.stderr)\n"
                        "def keep():\n    frame = sys._getframe()\n    payload = bytearray(1 << 20)\n"
                        "keep()\n")
            run = leakgate("scan", "--json", "-", "-m", "leaky_module", "one", "two", cwd=tmp)
            self.assertEqual(run.returncode, 1, run.stderr)
            report = json.loads(run.stdout)
            self.assertEqual(report["results"][0]["subject"], "-m leaky_module")
            self.assertEqual(report["findings"][0]["frames"][0]["function"], "keep")
            argv, name, spec = json.loads(run.stderr.strip().splitlines()[0])
            self.assertEqual((argv[1:], name, spec), (["one", "two"], "__main__", "leaky_module"))
            self.assertEqual(os.path.realpath(argv[0]), os.path.realpath(os.path.join(tmp, "leaky_module.py")))
            missing = leakgate("scan", "-m", "no_such_module_here", cwd=tmp)
            self.assertEqual(missing.returncode, 2)
            self.assertIn("scan -m no_such_module_here: No module named no_such_module_here", missing.stdout)
            self.assertEqual(leakgate("scan", cwd=tmp).returncode, 2)


class Environments(unittest.TestCase):
    def test_python_runs_the_script_in_a_venv_with_its_site_packages(self):
        with tempfile.TemporaryDirectory(prefix="leakgate-venv-") as tmp:
            venv = os.path.join(tmp, "venv")
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
            site = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip()
            with open(os.path.join(site, "only_in_this_venv.py"), "w") as module:
                module.write("import sys\nMARKER = sys.prefix\n")
            script = os.path.join(tmp, "uses_venv.py")
            with open(script, "w") as out:
                out.write("import only_in_this_venv, sys\n"
                          "assert sys.prefix == only_in_this_venv.MARKER, sys.prefix\n"
                          "print('venv prefix', sys.prefix)\n")
            report = os.path.join(tmp, "report.json")
            run = leakgate("scan", "--python", os.path.join(venv, "bin", "python"), "--json", report, "--", script)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn(f"venv prefix {venv}", run.stderr)
            without = leakgate("scan", "--", script)
            self.assertEqual(without.returncode, 3, "the build's own environment lacks the venv's module")

    def test_the_standard_modules_have_the_files_the_interpreter_gives_them(self):
        # The modules frozen into 3.11+ (abc, os, codecs...) get their __file__ from the
        # interpreter's stdlib_dir; the embedded one had none, and torch 2.1 and 2.2 read
        # abc.__file__ in every torch.compile.
        probe = ("import abc, codecs, json, os, sys\n"
                 "print(json.dumps({m.__name__: getattr(m, '__file__', None) for m in (abc, codecs, os)}),"
                 " file=sys.stderr)\n")
        with tempfile.TemporaryDirectory(prefix="leakgate-stdlib-") as tmp:
            script = os.path.join(tmp, "stdlib_files.py")
            with open(script, "w") as out:
                out.write(probe)
            plain = subprocess.run([sys.executable, script], capture_output=True, text=True, check=True)
            expected = json.loads(plain.stderr.strip().splitlines()[-1])
            self.assertTrue(all(expected.values()), expected)
            run = leakgate("scan", "--", script)
            self.assertEqual(run.returncode, 0, run.stderr)
            lines = [line for line in run.stderr.splitlines() if line.startswith("{")]
            self.assertEqual(json.loads(lines[-1]), expected)


class Baselines(unittest.TestCase):
    def test_a_figure_grown_beyond_its_budget_fails_and_within_it_passes(self):
        targets = os.path.join(FIXTURES, "targets")
        with tempfile.TemporaryDirectory() as tmp:
            good = os.path.join(tmp, "good.json")
            run = leakgate("gate", "--quiet", "--target", os.path.join(targets, "temporary_back.py"),
                           "--checks", "decorate-sentinels", "--json", good)
            self.assertEqual(run.returncode, 0, run.stderr)
            for budget, expected in ((1 << 20, 1), (1 << 40, 0)):
                budgets = os.path.join(tmp, "budgets.txt")
                with open(budgets, "w") as out:
                    out.write(f"# allowed growth in bytes pinned\ndecorate-sentinels = {budget}\n")
                report = os.path.join(tmp, "new.json")
                run = leakgate("gate", "--quiet", "--target", os.path.join(targets, "frame_cycle_461.py"),
                               "--checks", "decorate-sentinels", "--baseline", good, "--budgets", budgets,
                               "--json", report)
                self.assertEqual(run.returncode, expected, run.stderr)
                with open(report) as report_file:
                    check = json.load(report_file)["checks"][0]
                self.assertIn("the baseline's 0 to", check["reason"])

    def test_a_baseline_made_with_other_sentinels_is_a_usage_error_before_anything_runs(self):
        # Pinned bytes count sentinel payloads: 37 sentinels of 1 MiB would read as within the
        # budget of 19 of 8 MiB. A baseline of another size, or of no recorded size, is refused.
        target = os.path.join(FIXTURES, "targets", "frame_cycle_461.py")
        with tempfile.TemporaryDirectory() as tmp:
            good = os.path.join(tmp, "good.json")
            run = leakgate("gate", "--quiet", "--target", target, "--checks", "decorate-sentinels",
                           "--sentinel-mib", "2", "--json", good)
            self.assertEqual(run.returncode, 1, run.stderr)
            report = os.path.join(tmp, "new.json")
            run = leakgate("gate", "--quiet", "--target", target, "--checks", "decorate-sentinels",
                           "--sentinel-mib", "1", "--baseline", good, "--json", report)
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn("host sentinels of 2.0 MiB", run.stderr)
            self.assertIn("--sentinel-mib 2", run.stderr)
            self.assertFalse(os.path.exists(report))  # refused before any worker ran
            # The same size compares.
            run = leakgate("gate", "--quiet", "--target", target, "--checks", "decorate-sentinels",
                           "--sentinel-mib", "2", "--baseline", good)
            self.assertEqual(run.returncode, 0, run.stderr)
            # A baseline whose figures count sentinels it does not record.
            with open(good) as baseline_file:
                baseline = json.load(baseline_file)
            for result in baseline["results"]:
                result["sentinels"] = []
            stripped = os.path.join(tmp, "stripped.json")
            with open(stripped, "w") as out:
                json.dump(baseline, out)
            run = leakgate("gate", "--quiet", "--target", target, "--checks", "decorate-sentinels",
                           "--sentinel-mib", "2", "--baseline", stripped)
            self.assertEqual(run.returncode, 2, run.stderr)
            self.assertIn("records no sentinel", run.stderr)

    def test_a_baseline_that_is_not_a_gate_report_is_a_usage_error(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as bad:
            bad.write('{"schema": "something-else"}')
            bad.flush()
            run = leakgate("gate", "--target", "reference", "--baseline", bad.name)
            self.assertEqual(run.returncode, 2)
            self.assertIn("not the JSON of a `leakgate gate` run", run.stderr)


class MachineOutput(unittest.TestCase):
    def test_json_on_stdout_is_the_only_thing_on_stdout(self):
        run = leakgate("scan", "--json", "-", "--", os.path.join(FIXTURES, "scan", "leak_traceback_in_local.py"))
        self.assertEqual(run.returncode, 1)
        report = json.loads(run.stdout)
        self.assertEqual(report["schema"], "leakgate/1")
        self.assertIn("frame-cycle", run.stderr)  # the human report moved to stderr

    def test_sarif_fingerprints_are_the_same_in_two_runs(self):
        target = os.path.join(FIXTURES, "targets", "frame_cycle_461.py")
        fingerprints = []
        with tempfile.TemporaryDirectory() as tmp:
            for run_number in (1, 2):
                sarif = os.path.join(tmp, f"run{run_number}.sarif")
                leakgate("gate", "--quiet", "--target", target, "--checks", "decorate", "--sarif", sarif)
                with open(sarif) as sarif_file:
                    results = json.load(sarif_file)["runs"][0]["results"]
                fingerprints.append(sorted(json.dumps(r["partialFingerprints"]) for r in results))
        self.assertTrue(fingerprints[0])
        self.assertEqual(fingerprints[0], fingerprints[1])

    def test_sarif_points_at_the_line_that_binds_the_frame_not_where_it_returned(self):
        # leak_exception_kept_in_local.py: `last_error = exc` at line 36 closes the cycle; the
        # frame of `load_records` returned at line 39. With `gate --lint` the same holds for the
        # model's `cur_frame = inspect.currentframe()` (line 44; the frame returned at 47).
        with tempfile.TemporaryDirectory() as tmp:
            sarif = os.path.join(tmp, "scan.sarif")
            leakgate("scan", "--quiet", "--sarif", sarif, "--",
                     os.path.join(FIXTURES, "scan", "leak_exception_kept_in_local.py"))
            with open(sarif) as sarif_file:
                result = json.load(sarif_file)["runs"][0]["results"][0]
            self.assertEqual(result["locations"][0]["physicalLocation"]["region"]["startLine"], 36)
            related = result["relatedLocations"][0]
            self.assertEqual(related["physicalLocation"]["region"]["startLine"], 39)
            self.assertIn("where it returned", related["message"]["text"])
            gate_sarif = os.path.join(tmp, "gate.sarif")
            leakgate("gate", "--quiet", "--lint", "--checks", "decorate", "--sarif", gate_sarif,
                     "--target", os.path.join(FIXTURES, "targets", "frame_cycle_461.py"))
            with open(gate_sarif) as sarif_file:
                results = json.load(sarif_file)["runs"][0]["results"]
            lines = {r["locations"][0]["physicalLocation"]["region"]["startLine"]
                     for r in results if r["ruleId"] == "frame-cycle"}
            self.assertEqual(lines, {44, 51})

    def test_a_context_manager_generator_is_told_to_yield_after_its_except_clause(self):
        # leak_contextmanager_yield_in_except.py forms its cycle on 3.12 and later only.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "scan.json")
            leakgate("scan", "--quiet", "--json", out, "--",
                     os.path.join(FIXTURES, "scan", "leak_contextmanager_yield_in_except.py"))
            with open(out) as report_file:
                report = json.load(report_file)
        version = tuple(int(part) for part in report["python"]["version"].split(".")[:2])
        if version < (3, 12):
            self.assertEqual(report["findings"], [])
            return
        (finding,) = report["findings"]
        self.assertEqual(finding["frames"][0]["function"], "storage")
        self.assertIn("Yield after the `except` clause", finding["fix"])
        self.assertIn("`_GeneratorContextManager.__exit__` (standard library", finding["fix"])

    def test_an_unwritable_json_path_writes_nothing_and_says_why(self):
        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, "missing-dir", "report.json")
            run = leakgate("scan", "--json", target, "--", os.path.join(FIXTURES, "scan", "clean_sys_exit_zero.py"))
            self.assertEqual(run.returncode, 3)
            self.assertIn("cannot create", run.stderr)
            self.assertFalse(os.path.exists(target))


if __name__ == "__main__":
    LEAKGATE = sys.argv.pop(sys.argv.index("--leakgate") + 1)
    sys.argv.remove("--leakgate")
    if not os.access(LEAKGATE, os.X_OK):
        print("skip: no leakgate binary")
        sys.exit(77)
    unittest.main(verbosity=2)
