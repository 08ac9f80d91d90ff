#!/usr/bin/env python3
"""leakgate's HTML reports as a browser shows them: headless Chromium (Debian's `chromium`).

    test_html_chromium.py --leakgate BUILD/leakgate

Each report is written by a real run (the gate on the bundled model, on a launch-path model with a
soak, on a target that raises; a lint of the lint fixtures), loaded by Chromium from its file, and
checked on the DOM Chromium built (`--dump-dom`): every check of the JSON report of the same run
has its row, no backtick is left raw outside verbatim text, the soak's target and reference are two
series of one <svg>, the launch has its three plots, a lint finding shows its source lines and no
cycle, a failed workload's Python stack is folded under its row, and the header names the date,
the command, leakgate's version, the Python and the package under test. A screenshot of each must
be a non-empty PNG. Exit 77 (skip) with the reason when there is no Chromium.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TARGETS = os.path.join(ROOT, "fixtures", "targets")
LEAKGATE = None
CHROMIUM = None

# A target whose package is known (pip is in every CPython leakgate embeds): the header names it.
PACKAGED_TARGET = '''\
import frame_cycle_461 as model
TARGET_NAME = "packaged"
TARGET_PACKAGE = "pip"
kernel = model.kernel
jit = model.jit
'''


class Dom(HTMLParser):
    """What the tests ask of the page: elements with their classes, the text outside <pre>, the
    check table's rows, the header."""

    VOID = {"meta", "br", "img", "input", "link", "hr", "circle", "rect", "line", "polyline", "path"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # (tag, classes)
        self.elements = []  # (tag, classes, ancestors' (tag, classes))
        self.prose = []  # text outside <pre>
        self.rows, self.row, self.cell = [], None, None
        self.header = []

    def handle_starttag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        self.elements.append((tag, classes, list(self.stack)))
        if tag == "tr":
            self.row = []
        elif tag == "td" and self.row is not None:
            self.cell = []
        if tag not in self.VOID:
            self.stack.append((tag, classes))

    def handle_startendtag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        self.elements.append((tag, classes, list(self.stack)))

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None and self.row is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        tags = [tag for tag, _ in self.stack]
        if "pre" not in tags and "style" not in tags:
            self.prose.append(data)
        if self.cell is not None and "details" not in tags:
            self.cell.append(data)
        if "header" in tags:
            self.header.append(data)

    def count(self, tag, *classes, inside=None):
        return sum(1 for t, c, ancestors in self.elements
                   if t == tag and set(classes) <= c
                   and (inside is None or any(a == inside[0] and set(inside[1:]) <= ac for a, ac in ancestors)))


class HtmlInChromium(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="leakgate-html-")
        self.addCleanup(shutil.rmtree, self.directory, True)

    def report(self, name, *args, expect):
        html = os.path.join(self.directory, name + ".html")
        out = os.path.join(self.directory, name + ".json")
        run = subprocess.run([LEAKGATE, args[0], "--quiet", "--html", html, "--json", out, *args[1:]],
                             capture_output=True, text=True, timeout=600, cwd=self.directory)
        self.assertEqual(run.returncode, expect, run.stdout + run.stderr)
        with open(out, encoding="utf-8") as handle:
            document = json.load(handle)
        dom = self.look(html)
        self.assert_whole(dom, document)
        return dom, document

    def look(self, html):
        """Chromium's DOM of the page, and a screenshot that must not be empty."""
        common = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  f"--user-data-dir={os.path.join(self.directory, 'profile')}", "--hide-scrollbars"]
        url = "file://" + html
        dump = subprocess.run(common + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
        self.assertEqual(dump.returncode, 0, dump.stderr[-2000:])
        self.assertIn("<main>", dump.stdout)
        png = html[:-5] + ".png"
        shot = subprocess.run(common + ["--window-size=1280,2000", f"--screenshot={png}", url],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(shot.returncode, 0, shot.stderr[-2000:])
        with open(png, "rb") as handle:
            image = handle.read()
        self.assertTrue(image.startswith(b"\x89PNG\r\n\x1a\n"), png)
        self.assertGreater(len(image), 20_000, "the screenshot is (nearly) blank")
        dom = Dom()
        dom.feed(dump.stdout)
        dom.close()
        return dom

    def assert_whole(self, dom, document):
        # Every check, and every worker error, of the run has its row in the table.
        shown = {tuple(row[:4]) for row in dom.rows if len(row) >= 6}
        for result in document["results"]:
            for check in result["checks"]:
                self.assertIn((result["workload"], result["role"], result["subject"], check["name"]), shown)
        # Inline code rendered: no backtick left in the text people read.
        prose = "".join(dom.prose)
        self.assertNotIn("`", prose, prose[max(0, prose.find("`") - 200):prose.find("`") + 200])
        header = " ".join("".join(dom.header).split())
        self.assertRegex(header, r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
        self.assertIn("leakgate " + document["tool"]["version"], header)
        self.assertIn("Python " + document["python"]["version"], header)
        self.assertIn("command: " + LEAKGATE, header)

    def test_gate_on_the_bundled_model(self):
        dom, document = self.report("bundled", "gate", "--checks", "decorate,import", expect=1)
        self.assertGreaterEqual(dom.count("svg", "path", inside=("article", "finding")), 1)
        self.assertGreaterEqual(dom.count("article", "finding"), 1)

    def test_the_package_under_test_is_named(self):
        target = os.path.join(self.directory, "packaged.py")
        with open(target, "w") as handle:
            handle.write(PACKAGED_TARGET)
        previous = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = TARGETS + (os.pathsep + previous if previous else "")
        try:
            dom, document = self.report("packaged", "gate", "--target", target, "--checks", "decorate", expect=1)
        finally:
            if previous is None:
                os.environ.pop("PYTHONPATH")
            else:
                os.environ["PYTHONPATH"] = previous
        # The version the run's own Python has installed.
        version = subprocess.run([document["python"]["executable"], "-c",
                                  "import importlib.metadata as m; print(m.version('pip'))"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        self.assertIn(f"under test: pip {version}", " ".join("".join(dom.header).split()))

    def test_a_launch_model_with_a_soak(self):
        dom, document = self.report(
            "launch", "gate", "--target", os.path.join(TARGETS, "launch", "uncached_packer.py"),
            "--checks", "launch,soak", "--soak-seconds", "3", "--launch-calls", "300", "--launch-runs", "3",
            expect=1)
        soaks = [r for r in document["results"] if r["workload"] == "soak"]
        self.assertEqual({r["role"] for r in soaks}, {"target", "reference"})
        # One plot: both series, their fits and the budget in the same <svg>.
        self.assertEqual(dom.count("svg", "chart", "soak"), 1)
        for role in ("target", "reference"):
            self.assertEqual(dom.count("polyline", "series", role, inside=("svg", "soak")), 1, role)
        self.assertEqual(dom.count("line", "fit", inside=("svg", "soak")), 2)
        self.assertEqual(dom.count("line", "budget", inside=("svg", "soak")), 1)
        # Allocations, net blocks and cyclic garbage: a plot each, the flagged bars marked.
        self.assertEqual(dom.count("svg", "chart", "launch"), 3)
        self.assertGreater(dom.count("rect", "target", "flagged", inside=("svg", "launch")), 0)
        self.assertGreater(dom.count("path", "spread", inside=("svg", "launch")), 0)

    def test_a_failed_workload_shows_its_python_stack_folded(self):
        dom, document = self.report(
            "raises", "gate", "--target", os.path.join(TARGETS, "broken", "raises_on_decorate.py"),
            "--checks", "decorate", expect=3)
        self.assertTrue(any(r.get("error") for r in document["results"]))
        self.assertGreaterEqual(dom.count("details", "stack", inside=("td",)), 1)

    def test_a_lint_run_shows_source_lines(self):
        dom, document = self.report("lint", "lint", os.path.join(ROOT, "fixtures", "lint"), expect=1)
        findings = [f for r in document["results"] for f in r.get("findings", [])]
        self.assertGreater(len(findings), 0)
        self.assertEqual(dom.count("pre", "source"), len(findings))
        self.assertEqual(dom.count("svg", "path"), 0)  # no cycle box for a place in a file


def main():
    global LEAKGATE, CHROMIUM
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    args, rest = parser.parse_known_args()
    LEAKGATE = os.path.abspath(args.leakgate)
    CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
    if CHROMIUM is None:
        print("skip: no chromium on PATH (scripts/setup.sh installs Debian's)")
        return 77
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
