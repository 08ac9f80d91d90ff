#!/usr/bin/env python3
"""Bad input loses nothing (issue 14, items 10 and 12): report files, odd paths, odd exits.

    test_bad_input.py --leakgate BUILD/leakgate
Every test works inside its own temporary directory and touches nothing outside it.
"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

LEAKGATE = None
CLEAN = "def f():\n    return 1\n\nf()\n"


def run(*args, cwd=None, timeout=300):
    return subprocess.run([LEAKGATE, *args], capture_output=True, timeout=timeout, cwd=cwd)


class Scratch(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.dir = self._dir.name
        self.script = self.path("script.py")
        self.write(self.script, CLEAN)

    def tearDown(self):
        self._dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, path, text):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def read(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()


class ReportFiles(Scratch):
    def test_a_symlink_is_written_through_and_stays_a_link(self):
        real = self.path("real.json")
        self.write(real, "old")
        link = self.path("link.json")
        os.symlink("real.json", link)
        self.assertEqual(run("scan", "-q", "--json", link, "--", self.script).returncode, 0)
        self.assertTrue(os.path.islink(link))
        self.assertEqual(json.loads(self.read(real))["tool"]["name"], "leakgate")

    def test_a_dangling_symlink_creates_the_file_it_names(self):
        link = self.path("link.json")
        os.symlink("made.json", link)
        self.assertEqual(run("scan", "-q", "--json", link, "--", self.script).returncode, 0)
        self.assertTrue(os.path.islink(link))
        self.assertTrue(os.path.isfile(self.path("made.json")))

    def test_mode_is_kept(self):
        out = self.path("out.json")
        self.write(out, "old")
        os.chmod(out, 0o600)
        self.assertEqual(run("scan", "-q", "--json", out, "--", self.script).returncode, 0)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o600)

    def test_a_new_file_follows_the_umask(self):
        out = self.path("out.json")
        old = os.umask(0o027)
        try:
            self.assertEqual(run("scan", "-q", "--json", out, "--", self.script).returncode, 0)
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o640)

    def test_hard_links_are_not_split(self):
        out = self.path("out.json")
        self.write(out, "old")
        other = self.path("other.json")
        os.link(out, other)
        self.assertEqual(run("scan", "-q", "--json", out, "--", self.script).returncode, 0)
        self.assertEqual(os.stat(out).st_ino, os.stat(other).st_ino)
        self.assertEqual(json.loads(self.read(other))["tool"]["name"], "leakgate")

    def test_a_fifo_with_a_reader_is_written_in_place(self):
        fifo = self.path("pipe")
        os.mkfifo(fifo)
        reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
        code = run("scan", "-q", "--json", fifo, "--", self.script).returncode
        text, _ = reader.communicate(timeout=60)
        self.assertEqual(code, 0)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        self.assertEqual(json.loads(text)["tool"]["name"], "leakgate")

    def test_a_fifo_without_a_reader_is_an_error_not_a_wait(self):
        fifo = self.path("pipe")
        os.mkfifo(fifo)
        result = run("scan", "-q", "--json", fifo, "--", self.script, timeout=120)
        self.assertEqual(result.returncode, 3)
        self.assertIn(b"no reader", result.stderr)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def test_a_directory_is_refused_and_left_alone(self):
        target = self.path("dir")
        os.mkdir(target)
        result = run("scan", "--json", target, "--", self.script)
        self.assertEqual(result.returncode, 3)
        self.assertTrue(os.path.isdir(target))
        self.assertIn(b"exit 3", result.stdout)  # the text says the code the process returns

    def test_an_output_that_is_the_script_is_a_usage_error(self):
        result = run("scan", "--json", self.script, "--", self.script)
        self.assertEqual(result.returncode, 2)
        self.assertIn(b"is an input of this run", result.stderr)
        self.assertEqual(self.read(self.script), CLEAN)

    def test_an_output_that_is_the_script_through_a_link_is_a_usage_error(self):
        link = self.path("alias.json")
        os.symlink("script.py", link)
        self.assertEqual(run("scan", "--json", link, "--", self.script).returncode, 2)
        self.assertEqual(self.read(self.script), CLEAN)

    def test_two_outputs_on_one_path_are_a_usage_error(self):
        out = self.path("both")
        result = run("scan", "--json", out, "--html", out, "--", self.script)
        self.assertEqual(result.returncode, 2)
        self.assertIn(b"two reports would be written to one file", result.stderr)
        self.assertFalse(os.path.exists(out))

    def test_a_lint_output_that_is_a_linted_file_is_a_usage_error(self):
        self.assertEqual(run("lint", "--sarif", self.script, self.script).returncode, 2)
        self.assertEqual(self.read(self.script), CLEAN)


class OddInput(Scratch):
    def scan(self, script, *args):
        out = self.path("scan.json")
        result = run("scan", "-q", "--json", out, "--", script, *args)
        with open(out, encoding="utf-8") as f:
            return result.returncode, json.load(f)

    def test_a_script_whose_name_is_not_utf8_runs(self):
        name = os.path.join(os.fsencode(self.dir), b"caf\xe9.py")
        with open(name, "w", encoding="utf-8") as f:
            f.write("import sys\nsys._getframe().f_locals\n")
        code, report = self.scan(name)
        self.assertEqual(code, 0, report["results"][0].get("error"))
        self.assertEqual(report["results"][0]["checks"][0]["status"], "pass")

    def test_a_huge_argument_list_reaches_the_script(self):
        self.write(self.script, "import sys\nassert len(sys.argv) == 30001, len(sys.argv)\n")
        code, report = self.scan(self.script, *["x" * 8] * 30000)
        self.assertEqual(code, 0, report["results"][0].get("error"))

    def test_an_exit_code_beyond_64_bits_is_kept(self):
        self.write(self.script, "raise SystemExit(10**30)\n")
        code, report = self.scan(self.script)
        self.assertEqual(code, 0, report["results"][0].get("error"))
        self.assertEqual(report["results"][0]["details"]["script_exit"], str(10**30))

    def test_an_exception_text_with_a_lone_surrogate_is_reported(self):
        self.write(self.script, "raise ValueError('bad \\udcff text')\n")
        code, report = self.scan(self.script)
        self.assertEqual(code, 3)
        self.assertIn("ValueError", report["results"][0]["error"]["message"])

    def test_a_venv_that_prints_a_banner_and_has_3000_path_entries_is_used(self):
        venv = self.path("venv")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
        site = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                               "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        entries = []
        for i in range(3000):
            entry = os.path.join(self.dir, "paths", f"entry-{i:04d}")
            os.makedirs(entry)
            entries.append(entry)
        with open(os.path.join(site, "many.pth"), "w", encoding="utf-8") as f:
            f.write("\n".join(entries) + "\n")
        with open(os.path.join(site, "banner.pth"), "w", encoding="utf-8") as f:
            f.write("import sys; print('Welcome to the cluster!')\n")
        self.write(self.script, "import sys\nassert len(sys.path) > 3000, len(sys.path)\n")
        out = self.path("scan.json")
        result = run("scan", "-q", "--python", os.path.join(venv, "bin", "python"), "--json", out, "--",
                     self.script)
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        self.assertEqual(result.returncode, 0, (result.stderr, report["results"][0].get("error")))

    def test_a_syntax_error_is_the_scripts_not_the_harness(self):
        self.write(self.script, "def f(:\n")
        code, report = self.scan(self.script)
        self.assertEqual(code, 3)
        message = report["results"][0]["error"]["message"]
        self.assertNotIn("harness", message)
        self.assertIn("SyntaxError", message)


LEAK = "import sys\n\ndef keep():\n    frame = sys._getframe()\n    return frame\n"


def elif_chain(branches):
    lines = ["def pick(x):", "    if x == 0:", "        return 0"]
    for i in range(1, branches):
        lines += [f"    elif x == {i}:", f"        return {i}"]
    return "\n".join(lines) + "\n"


class LintInput(Scratch):
    """Python files lint cannot or could hardly analyse: each is that file's outcome, and the
    finding in the file beside it is kept."""

    def lint(self, source):
        odd = self.path("odd.py")
        self.write(odd, source)
        leak = self.path("leak.py")
        self.write(leak, LEAK)
        out = self.path("lint.json")
        result = run("lint", "-q", "--json", out, odd, leak)
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        return result.returncode, report, report["results"][0]["details"]

    def test_a_400_branch_elif_chain_is_analysed(self):
        code, report, details = self.lint(elif_chain(400))
        self.assertEqual(code, 1)
        self.assertEqual(details["files"], 2)
        self.assertEqual(details["unparsed"], [])
        self.assertEqual(len(report["findings"]), 1)

    def test_a_20000_branch_elif_chain_is_that_files_error_and_the_rest_is_kept(self):
        code, report, details = self.lint(elif_chain(20000))
        self.assertEqual(code, 1)
        self.assertEqual([entry["file"] for entry in details["unparsed"]], [self.path("odd.py")])
        self.assertEqual(len(report["findings"]), 1)

    @unittest.skipIf(sys.version_info >= (3, 12), "3.12 syntax parses on this build's Python")
    def test_syntax_newer_than_the_embedded_python_is_that_files_error(self):
        code, report, details = self.lint("type Alias = int\n")
        self.assertEqual(code, 1)
        self.assertEqual(len(details["unparsed"]), 1)
        self.assertIn("does not parse", details["unparsed"][0]["message"])


if __name__ == "__main__":
    if "--leakgate" not in sys.argv:
        sys.exit("usage: test_bad_input.py --leakgate BUILD/leakgate")
    index = sys.argv.index("--leakgate")
    LEAKGATE = sys.argv[index + 1]
    del sys.argv[index:index + 2]
    if not os.path.exists(LEAKGATE):
        print(f"skip: no leakgate binary at {LEAKGATE}")
        sys.exit(77)
    unittest.main(verbosity=2)
