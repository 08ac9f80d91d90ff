#!/usr/bin/env python3
"""`leakgate bisect` over a release history with every kind of transition, offline: the wheels of
fixtures/history/make_history.py through pip (PIP_NO_INDEX, PIP_FIND_LINKS), each release in
its own venv of a temporary cache, then `leakgate cache list` and `cache prune` on that cache.

    test_bisect_history.py --leakgate BUILD/leakgate
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "fixtures", "history"))
sys.path.insert(0, HERE)
import make_history  # noqa: E402
import test_junit_schema  # noqa: E402  its xmlschema venv and junit-10.xsd
import test_sarif_schema  # noqa: E402  the SARIF 2.1.0 schema and its validation
from tool_venv import tool_venv  # noqa: E402

TARGET = os.path.join(ROOT, "fixtures", "history", "history_target.py")
# The culprit's function as the frame names it: its qualified name from 3.11 (co_qualname).
KERNEL = "ModelDSL.kernel (__init__.py)" if sys.version_info >= (3, 11) else "kernel (__init__.py)"
LEAKGATE = None
WORK = None  # the temporary directory: wheels/ and cache/


def leakgate(*args, cache="cache", **variables):
    env = dict(os.environ, LEAKGATE_CACHE_DIR=os.path.join(WORK, cache), PIP_NO_INDEX="1",
               PIP_FIND_LINKS=os.path.join(WORK, "wheels"), NO_COLOR="1", **variables)
    return subprocess.run([LEAKGATE, *args], capture_output=True, text=True, timeout=900, env=env)


def bisect(*args, **keywords):
    out = os.path.join(WORK, "bisect.json")
    if os.path.exists(out):
        os.remove(out)
    run = leakgate("bisect", "--package", make_history.DIST, "--target", TARGET, "--checks", "decorate",
                   "--json", out, *args, **keywords)
    report = None
    if os.path.exists(out):
        with open(out) as report_file:
            report = json.load(report_file)
    return run, report


def changes(report):
    """Each transition as (from, to, across, {check: kind}) for the frame-cycle check."""
    return [(t["from"], t["to"], t["across"],
             {c["check"]: c["kind"] for c in t["changes"] if c["check"] == "decorate-frame-cycle"})
            for t in report["transitions"]]


class History(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gated, cls.report = bisect("--from", "1.0", "--to", "2.0")

    def test_the_releases_are_gated_in_pep440_order_without_pre_releases(self):
        self.assertEqual(self.gated.returncode, 1, self.gated.stderr)
        self.assertEqual([v["version"] for v in self.report["versions"]], ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5"])
        self.assertTrue(self.report["version_order"].startswith("packaging "))

    def test_every_transition_with_its_culprits_and_across_the_releases_without_a_verdict(self):
        self.assertEqual(changes(self.report), [
            ("1.0", "1.1", [], {"decorate-frame-cycle": "regressed"}),
            ("1.1", "1.3", ["1.2"], {"decorate-frame-cycle": "culprit"}),
            ("1.3", "1.5", ["1.4"], {"decorate-frame-cycle": "fixed"}),
        ])
        culprit = next(c for c in self.report["transitions"][1]["changes"] if c["check"] == "decorate-frame-cycle")
        self.assertEqual(culprit["before"]["culprit"], KERNEL)
        self.assertEqual(culprit["after"]["culprit"], "_caller_location (__init__.py)")
        # The sentinels have no finding of their own: the frame cycle that kept them is their culprit.
        sentinels = next(c for c in self.report["transitions"][0]["changes"] if c["check"] == "decorate-sentinels")
        self.assertEqual(sentinels["after"]["culprit"], KERNEL)
        self.assertEqual(self.report["first_bad"]["decorate-frame-cycle"], "1.1")

    def test_the_text_names_each_transition_and_why_a_release_has_no_verdict(self):
        text = self.gated.stdout
        self.assertIn("transitions (3, in PEP 440 order", text)
        self.assertIn("1.1 -> 1.3, across 1.2 (error)", text)
        self.assertIn("1.3 -> 1.5, across 1.4 (error)", text)
        self.assertIn(f"culprit `{KERNEL}` -> `_caller_location (__init__.py)`", text)
        self.assertIn("1.2: error: cannot download leakgate-history-dsl==1.2 for Python", text)
        self.assertIn("No matching distribution found for leakgate-history-missing", text)

    def test_the_matrix_carries_status_amount_and_culprit(self):
        row = {v["version"]: v for v in self.report["versions"]}
        self.assertEqual(row["1.2"]["status"], "error")
        self.assertEqual(row["1.4"]["cells"]["decorate-frame-cycle"]["status"], "error")
        cell = row["1.1"]["cells"]["decorate-frame-cycle"]
        self.assertEqual(cell["status"], "fail")
        self.assertGreater(cell["amount"], 1 << 20)
        self.assertIsNone(row["1.0"]["cells"]["decorate-frame-cycle"]["culprit"])

    def test_a_release_that_cannot_be_installed_leaves_no_venv(self):
        venvs = os.listdir(os.path.join(WORK, "cache", "venvs"))
        self.assertNotIn(f"{make_history.DIST}-1.2-py%d.%d" % sys.version_info[:2], venvs)
        self.assertIn(f"{make_history.DIST}-1.1-py%d.%d" % sys.version_info[:2], venvs)


def matrix(report):
    """What a bisect measured and concluded, without the timings of its gate reports."""
    return ([(v["version"], v["status"], v["cells"]) for v in report["versions"]], report["transitions"],
            report["first_bad"], report["first_good"], report["checks"], report["exit_code"])


class ShardsAndJobs(unittest.TestCase):
    def test_two_shards_merged_and_a_parallel_run_give_the_unsharded_report(self):
        whole = bisect("--from", "1.0", "--to", "2.0")[1]
        parts = []
        for index, jobs in (("1/2", "1"), ("2/2", "2")):
            run, part = bisect("--from", "1.0", "--to", "2.0", "--shard", index, "-j", jobs)
            self.assertEqual(part["shard"], index, run.stderr)
            path = os.path.join(WORK, f"shard{index[0]}.json")
            with open(path, "w") as out:
                json.dump(part, out)
            parts.append(path)
        self.assertEqual([v["version"] for v in json.load(open(parts[0]))["versions"]], ["1.0", "1.2", "1.4"])
        merged_path = os.path.join(WORK, "merged.json")
        merge = leakgate("merge", parts[1], parts[0], "--json", merged_path)
        self.assertEqual(merge.returncode, 1, merge.stderr)  # the history has failures
        self.assertIn("1.1 -> 1.3, across 1.2 (error)", merge.stdout)
        with open(merged_path) as merged:
            self.assertEqual(matrix(json.load(merged)), matrix(whole))
        parallel = bisect("--from", "1.0", "--to", "2.0", "-j", "3")[1]
        self.assertEqual(matrix(parallel), matrix(whole))

    def test_merge_refuses_what_is_not_one_history(self):
        one = os.path.join(WORK, "one.json")
        _, report = bisect("--versions", "1.0")
        with open(one, "w") as out:
            json.dump(report, out)
        other = dict(report, package="something-else")
        with open(os.path.join(WORK, "other.json"), "w") as out:
            json.dump(other, out)
        with open(os.path.join(WORK, "with.json"), "w") as out:
            json.dump(dict(report, **{"with": ["numpy<2.5"], "versions": []}), out)
        with open(os.path.join(WORK, "gate.json"), "w") as out:
            json.dump(report["versions"][0]["report"], out)
        for files, message in [([one, one], "gated 1.0 as well as"),
                               ([one, os.path.join(WORK, "other.json")], "is of package something-else"),
                               ([one, os.path.join(WORK, "with.json")], "with numpy<2.5, target"),
                               ([os.path.join(WORK, "gate.json")], "is not a `leakgate bisect --json` report"),
                               ([os.path.join(WORK, "missing.json")], "cannot read")]:
            with self.subTest(message=message):
                run = leakgate("merge", *files)
                self.assertEqual(run.returncode, 2, run.stdout)
                self.assertIn(message, run.stderr)
        for shard in ("0/2", "3/2", "1/0", "x", "1/2/3"):
            self.assertEqual(bisect("--versions", "1.0", "--shard", shard)[0].returncode, 2, shard)


class Selection(unittest.TestCase):
    def test_pre_takes_dev_and_release_candidates_in_pep440_order(self):
        run, report = bisect("--versions", ">=1.0", "--pre")
        self.assertEqual([v["version"] for v in report["versions"]],
                         ["1.0", "1.1.dev0", "1.1", "1.2", "1.3", "1.4", "1.5", "2.0rc1"], run.stderr)
        self.assertEqual([(t["from"], t["to"]) for t in report["transitions"]],
                         [("1.0", "1.1.dev0"), ("1.1", "1.3"), ("1.3", "1.5"), ("1.5", "2.0rc1")])

    def test_a_specifier_set_selects(self):
        run, report = bisect("--versions", ">1.0,<1.3,!=1.2")
        self.assertEqual([v["version"] for v in report["versions"]], ["1.1"], run.stderr)

    def test_an_explicit_list_is_gated_oldest_first(self):
        run, report = bisect("--versions", "1.5,1.0,1.1.dev0")
        self.assertEqual([v["version"] for v in report["versions"]], ["1.0", "1.1.dev0", "1.5"], run.stderr)

    def test_an_extra_installs_the_code_path_that_leaks(self):
        plain = {v["version"]: v for v in bisect("--versions", "1.5")[1]["versions"]}
        run, report = bisect("--versions", "1.5", "--extra", "fast")
        self.assertEqual(report["extras"], ["fast"])
        self.assertEqual(plain["1.5"]["cells"]["decorate-frame-cycle"]["status"], "pass")
        self.assertEqual(report["versions"][0]["cells"]["decorate-frame-cycle"]["status"], "fail", run.stdout)
        self.assertIn(f"{make_history.DIST}[fast]", run.stdout)
        self.assertTrue(os.path.isdir(os.path.join(WORK, "cache", "venvs",
                                                   f"{make_history.DIST}-1.5+fast-py%d.%d" % sys.version_info[:2])))

    def test_with_installs_a_requirement_beside_every_release_in_a_venv_of_its_own(self):
        run, report = bisect("--versions", "1.5", "--with", "leakgate-history-fast")
        self.assertEqual(report["with"], ["leakgate-history-fast"], run.stderr)
        self.assertEqual(report["versions"][0]["cells"]["decorate-frame-cycle"]["status"], "fail", run.stdout)
        self.assertIn(f"{make_history.DIST} with leakgate-history-fast, target", run.stdout)
        suffix = "-py%d.%d" % sys.version_info[:2]
        venvs = [name for name in os.listdir(os.path.join(WORK, "cache", "venvs"))
                 if name.startswith(f"{make_history.DIST}-1.5-with-") and name.endswith(suffix)]
        self.assertEqual(len(venvs), 1, os.listdir(os.path.join(WORK, "cache", "venvs")))
        with open(os.path.join(WORK, "cache", "venvs", venvs[0], ".leakgate-ready")) as ready:
            self.assertEqual(ready.read().split("\n"),
                             [f"{make_history.DIST}==1.5", "leakgate-history-fast", ""])
        # the same release without it is still clean: its venv is another one
        self.assertEqual(bisect("--versions", "1.5")[1]["versions"][0]["cells"]["decorate-frame-cycle"]["status"],
                         "pass")

    def test_with_an_option_or_nothing_is_a_usage_error_that_installs_nothing(self):
        for requirement in ("--with=-e.", "--with=--index-url=http://example.invalid", "--with= "):
            with self.subTest(requirement=requirement):
                run, report = bisect("--versions", "1.5", requirement, cache="cache-with")
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertIn("give a requirement", run.stderr)
                self.assertIsNone(report)
                self.assertFalse(os.path.exists(os.path.join(WORK, "cache-with", "venvs")))

    def test_bad_selections_are_usage_errors_that_install_nothing(self):
        for args, message in [(["--versions", "1.0,>=1.1"], "either a list of versions or one specifier set"),
                              (["--versions", "1.0,banana"], "`banana` is not a PEP 440 version"),
                              (["--versions", ">=1.0,<<2"], "is not a PEP 440 version specifier"),
                              (["--versions", ">=3"], "no release of leakgate-history-dsl matches >=3"),
                              (["--versions", "1.0", "--python", "2.7"], "this build embeds Python 3.")]:
            with self.subTest(args=args):
                run, report = bisect(*args)
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertIn(message, run.stderr)
                self.assertIsNone(report)


class Junit(unittest.TestCase):
    def test_the_bisect_junit_is_valid_has_one_suite_per_release_and_role_and_carries_the_transitions(self):
        validator, why = test_junit_schema.tool_python()
        if validator is None:
            self.skipTest(f"xmlschema could not be installed from PyPI: {why}")
        out = os.path.join(WORK, "bisect.xml")
        run = leakgate("bisect", "--package", make_history.DIST, "--target", TARGET, "--checks", "decorate",
                       "--versions", "1.0,1.1,1.2", "-q", "--junit", out)
        self.assertEqual(run.returncode, 1, run.stderr)
        check = subprocess.run([validator, "-c", test_junit_schema.VALIDATE, test_junit_schema.SCHEMA, out],
                               capture_output=True, text=True, timeout=120)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        root = ElementTree.parse(out).getroot()
        ids = [(case.get("classname"), case.get("name")) for case in root.iter("testcase")]
        self.assertEqual(len(ids), len(set(ids)), ids)
        suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
        self.assertIn("leakgate.bisect.1.0.history_target", suites)
        self.assertIn("leakgate.bisect.1.1.reference", suites)
        install = suites["leakgate.bisect.1.2"].find("testcase")
        self.assertEqual(install.get("name"), "install")
        self.assertIn("No matching distribution found", install.find("error").get("message"))
        properties = {p.get("name"): p.get("value") for p in suites["leakgate.bisect.1.1.history_target"].iter("property")}
        self.assertTrue(properties["transition.decorate-frame-cycle"].startswith("regressed from 1.0: pass -> fail"),
                        properties)


class PageText(HTMLParser):
    """The text of a page, its <details> summaries apart."""

    def __init__(self):
        super().__init__()
        self.text, self.summaries, self._in_summary = [], [], False

    def handle_starttag(self, tag, attrs):
        self._in_summary = self._in_summary or tag == "summary"

    def handle_endtag(self, tag):
        if tag == "summary":
            self._in_summary = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_summary:
            self.summaries.append(data)


class SarifAndHtml(unittest.TestCase):
    """bisect and merge write SARIF (a run per release) and an HTML page, from the same matrix."""

    def written(self, command, *args):
        paths = {kind: os.path.join(WORK, f"{command}.{kind}") for kind in ("sarif", "html", "json")}
        for path in paths.values():
            if os.path.exists(path):
                os.remove(path)
        run = leakgate(command, *args, "-q", "--sarif", paths["sarif"], "--html", paths["html"], "--json", paths["json"])
        self.assertEqual(run.returncode, 1, run.stderr)
        with open(paths["sarif"]) as sarif, open(paths["html"]) as html, open(paths["json"]) as report:
            return json.load(sarif), html.read(), json.load(report), paths["sarif"]

    def check_sarif(self, sarif, path, versions):
        directory, why = tool_venv("jsonschema")
        if directory is None:
            self.skipTest(f"jsonschema could not be installed from PyPI: {why}")
        check = subprocess.run([os.path.join(directory, "bin", "python"), "-c", test_sarif_schema.VALIDATE,
                                test_sarif_schema.SCHEMA, path], capture_output=True, text=True, timeout=120)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        runs = {run["properties"]["release"]: run for run in sarif["runs"]}
        self.assertEqual(list(runs), versions)
        ids = [run["automationDetails"]["id"] for run in sarif["runs"]]
        self.assertEqual(ids, [f"leakgate/bisect/{make_history.DIST}/{v}/" for v in versions])
        failing = runs["1.1"]
        self.assertIn("frame-cycle", {r["ruleId"] for r in failing["results"]})
        self.assertEqual({r["properties"]["release"] for r in failing["results"]}, {"1.1"})
        regressed = {t["check"]: t for t in failing["properties"]["transitions"]}
        self.assertEqual(regressed["decorate-frame-cycle"]["kind"], "regressed")
        self.assertEqual(regressed["decorate-frame-cycle"]["culpritAfter"], KERNEL)
        self.assertEqual(runs["1.0"]["results"], [])
        errored = runs["1.2"]["invocations"][0]
        self.assertFalse(errored["executionSuccessful"])
        self.assertEqual(errored["toolExecutionNotifications"][0]["descriptor"]["id"], "release-error")
        self.assertIn("No matching distribution found", errored["toolExecutionNotifications"][0]["message"]["text"])

    def check_html(self, html, report):
        page = PageText()
        page.feed(html)
        text = " ".join("".join(page.text).split())
        for version in report["versions"]:
            self.assertIn(version["version"], text)
        self.assertIn(f"Transitions ({len(report['transitions'])})", text)
        self.assertIn("1.0 \u2192 1.1", text)
        self.assertIn(f"culprit {KERNEL}", text)
        self.assertIn("No matching distribution found", text)  # 1.2's error, in its row
        failing = next(v for v in report["versions"] if v["version"] == "1.1")["report"]
        count = sum(len(r["findings"]) for r in failing["results"] if r["role"] == "target")
        self.assertGreater(count, 0)
        self.assertIn(f"1.1: {count} finding{'' if count == 1 else 's'}", " ".join("".join(page.summaries).split()))
        self.assertNotIn("<script", html)

    def test_bisect_writes_both(self):
        sarif, html, report, path = self.written("bisect", "--package", make_history.DIST, "--target", TARGET,
                                                 "--checks", "decorate", "--versions", "1.0,1.1,1.2")
        self.check_sarif(sarif, path, ["1.0", "1.1", "1.2"])
        self.check_html(html, report)

    def test_merge_writes_both_from_the_shards(self):
        parts = []
        for index in ("1/2", "2/2"):
            run, part = bisect("--versions", "1.0,1.1,1.2", "--shard", index)
            path = os.path.join(WORK, f"formats-shard{index[0]}.json")
            with open(path, "w") as out:
                json.dump(part, out)
            parts.append(path)
        sarif, html, report, path = self.written("merge", *parts)
        self.check_sarif(sarif, path, ["1.0", "1.1", "1.2"])
        self.check_html(html, report)


class Installers(unittest.TestCase):
    """uv (from PyPI, in the tests' tool venvs) and pip make venvs that the gate judges alike."""

    def test_uv_and_pip_give_the_same_matrix_and_uv_links_its_cache(self):
        directory, why = tool_venv("uv")
        if directory is None:
            self.skipTest(f"uv could not be installed from PyPI: {why}")
        uv = os.path.join(directory, "bin", "uv")
        runs = {}
        for installer in ("pip", "uv"):
            run, report = bisect("--versions", "1.0,1.1,1.2,1.3", "--installer", installer, cache=f"cache-{installer}",
                                 LEAKGATE_UV=uv)
            self.assertEqual(run.returncode, 1, run.stderr)
            self.assertIn(f"with {'pip' if installer == 'pip' else 'uv '}", run.stderr)
            runs[installer] = report
        self.assertEqual(matrix(runs["uv"]), matrix(runs["pip"]))
        listed = leakgate("cache", "list", cache="cache-uv")
        self.assertIn("uv's cache: ", listed.stdout)
        venv = next(line.split() for line in listed.stdout.splitlines() if line.startswith(f"{make_history.DIST}-1.1-"))
        self.assertNotEqual(venv[3], "0", listed.stdout)  # linked: its files are uv's cache's
        pruned = leakgate("cache", "prune", cache="cache-uv")
        self.assertIn("removed uv\n", pruned.stdout)
        self.assertFalse(os.path.exists(os.path.join(WORK, "cache-uv", "uv")))

    def test_a_uv_that_is_not_there_is_a_usage_error_that_installs_nothing(self):
        for variables, message in [({"LEAKGATE_UV": "/bin/false"}, "LEAKGATE_UV=/bin/false does not run as uv"),
                                   ({"LEAKGATE_UV": "", "PATH": "/usr/bin:/bin"}, "no uv on PATH")]:
            with self.subTest(message=message):
                run, report = bisect("--versions", "1.0", "--installer", "uv", cache="cache-none", **variables)
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertIn(message, run.stderr)
                self.assertIsNone(report)
                self.assertFalse(os.path.exists(os.path.join(WORK, "cache-none", "venvs")))


class Cache(unittest.TestCase):
    def test_list_then_prune(self):
        bisect("--versions", "1.0")  # at least one venv, whatever ran before
        listed = leakgate("cache", "list")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertIn(f"{make_history.DIST}-1.0-py", listed.stdout)
        self.assertIn("total: ", listed.stdout)
        self.assertIn("interpreter environments: ", listed.stdout)  # the gate's kept answers
        kept = leakgate("cache", "prune", "--keep-wheels", "--older-than", "1")
        self.assertEqual(kept.returncode, 0, kept.stderr)
        self.assertIn("freed 0 B", kept.stdout)  # every venv was used within the day
        pruned = leakgate("cache", "prune")
        self.assertEqual(pruned.returncode, 0, pruned.stderr)
        self.assertIn(f"removed venvs/{make_history.DIST}-1.0-py", pruned.stdout)
        self.assertEqual(os.listdir(os.path.join(WORK, "cache", "venvs")), [])
        self.assertIn("removed environments/", pruned.stdout)
        self.assertEqual(os.listdir(os.path.join(WORK, "cache", "environments")), [])
        self.assertEqual(leakgate("cache", "prune", "--older-than", "-1").returncode, 2)
        self.assertEqual(leakgate("cache").returncode, 2)  # a subcommand is needed


def main():
    global LEAKGATE, WORK
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    args, rest = parser.parse_known_args()
    LEAKGATE = os.path.abspath(args.leakgate)
    if not os.path.exists(LEAKGATE):
        print("skip: no leakgate binary")
        return 77
    with tempfile.TemporaryDirectory() as work:
        WORK = work
        make_history.build(os.path.join(work, "wheels"))
        result = unittest.main(argv=[sys.argv[0], "-v", *rest], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
