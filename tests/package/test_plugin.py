"""The pytest plugin, through pytester in a fresh pytest process each: the marker, the fixture,
--leakgate, the figures in JUnit XML, the worker option, pytest's own collections, the reports'
directory and the accepted findings."""

import json
import os
import re
import signal
import time
import xml.etree.ElementTree as ElementTree

import pytest

from conftest import CLEAN_MODEL, MODEL_461, KERNEL

HEADER = f"""
import importlib.util
import pytest

def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

model = _load({str(MODEL_461)!r}, "model_461")
clean = _load({str(CLEAN_MODEL)!r}, "clean_model")
"""

LEAKING_AND_CLEAN = HEADER + """
@pytest.mark.leakgate(frame_cycles=0, sentinels="freed-by-refcount")
def test_leaks(leakgate):
    tensor = leakgate.sentinel("tensor", 64 << 20)

    @model.kernel
    def kernel():
        pass

@pytest.mark.leakgate
def test_clean(leakgate):
    tensor = leakgate.sentinel("tensor", 64 << 20)

    @clean.kernel
    def kernel():
        pass
"""


def test_the_marker_fails_the_leak_with_the_culprit_and_passes_the_fix(pytester):
    pytester.makepyfile(LEAKING_AND_CLEAN)
    run = pytester.runpytest_subprocess("-rA")
    run.assert_outcomes(passed=1, failed=1)
    output = run.stdout.str()
    for expected in ("test_leaks", "frame-cycle shape", KERNEL, "cur_frame",
                     "sentinel `tensor` (67108864 bytes, host) was freed-by-gc-only", "fix:"):
        assert expected in output, output


def test_the_figures_go_to_junit_xml(pytester):
    pytester.makepyfile(LEAKING_AND_CLEAN)
    pytester.runpytest_subprocess("--junitxml=report.xml")
    tree = ElementTree.parse(pytester.path / "report.xml")
    properties = {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
                  for case in tree.iter("testcase")}
    assert properties["test_leaks"]["leakgate.frame_cycles"] == "1"
    assert properties["test_leaks"]["leakgate.sentinel.tensor"] == "freed-by-gc-only"
    assert properties["test_leaks"]["leakgate.culprit"].startswith(KERNEL)
    assert properties["test_leaks"]["leakgate.locals"] == "cur_frame"
    assert int(properties["test_leaks"]["leakgate.pinned_bytes"]) >= 64 << 20
    assert properties["test_clean"]["leakgate.frame_cycles"] == "0"
    assert properties["test_clean"]["leakgate.sentinel.tensor"] == "freed-by-refcount"


def test_dash_dash_leakgate_measures_every_test(pytester):
    pytester.makepyfile(HEADER + """
def test_unmarked_leak():
    @model.kernel
    def kernel():
        pass

def test_unmarked_clean():
    @clean.kernel
    def kernel():
        pass
""")
    pytester.runpytest_subprocess().assert_outcomes(passed=2)
    run = pytester.runpytest_subprocess("--leakgate")
    run.assert_outcomes(passed=1, failed=1)
    assert KERNEL in run.stdout.str()


def test_dash_p_no_leakgate_disables_the_plugin(pytester):
    pytester.makepyfile(HEADER + """
@pytest.mark.leakgate
def test_leak():
    @model.kernel
    def kernel():
        pass
""")
    pytester.runpytest_subprocess().assert_outcomes(failed=1)
    pytester.runpytest_subprocess("-p", "no:leakgate").assert_outcomes(passed=1)


def test_unknown_marker_keywords_are_an_error_naming_them(pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.leakgate(frame_cycle=0)
def test_typo():
    pass

@pytest.mark.leakgate(sentinels="sometimes")
def test_bad_value():
    pass

@pytest.mark.leakgate(frame_cycles=0)
def test_fine():
    pass
""")
    run = pytester.runpytest_subprocess()
    run.assert_outcomes(passed=1, errors=2)
    output = run.stdout.str()
    assert "unknown keyword frame_cycle (known: frame_cycles" in output, output
    assert "sentinels must be one of" in output and "'sometimes'" in output, output


def test_pytests_own_collections_and_the_bodys_are_measured(pytester):
    pytester.makeconftest("""
import gc
import pytest

@pytest.fixture(autouse=True)
def collects_around_the_test():
    gc.collect()
    yield
    gc.collect()
""")
    pytester.makepyfile("""
import gc
import sys
import pytest

@pytest.mark.leakgate
def test_clean_body():
    x = [1, 2, 3]

@pytest.mark.leakgate
def test_body_collects():
    gc.collect()

def keeps_its_frame():
    frame = sys._getframe()

@pytest.mark.leakgate
def test_body_collects_a_frame_cycle():
    keeps_its_frame()
    gc.collect()

@pytest.mark.leakgate
def test_body_enables_gc():
    gc.enable()
""")
    run = pytester.runpytest_subprocess("-rA")
    run.assert_outcomes(passed=2, failed=2)
    output = run.stdout.str()
    failures = sections(output)
    cycle = failures["test_body_collects_a_frame_cycle"]
    assert "keeps_its_frame" in cycle and "which the program started" in cycle, cycle
    enables = failures["test_body_enables_gc"]
    assert "could not measure" in enables and "re-enabled the cyclic GC" in enables, enables
    assert "During handling" not in output, output


def test_a_failing_assertion_is_the_tests_own_failure(pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.leakgate
def test_fails():
    assert 1 == 2
""")
    run = pytester.runpytest_subprocess()
    run.assert_outcomes(failed=1)
    assert "assert 1 == 2" in run.stdout.str()


def test_device_sentinel_skips_with_the_reason_without_cuda(pytester):
    import leakgate_dsl
    if leakgate_dsl.cuda_status()["available"]:
        pytest.skip("CUDA is available here: the device sentinel is made, not skipped")
    pytester.makepyfile("""
import pytest

@pytest.mark.leakgate
def test_device(leakgate):
    buffer = leakgate.device_sentinel("buffer", 1 << 20)
""")
    run = pytester.runpytest_subprocess("-rs")
    run.assert_outcomes(skipped=1)
    assert "CUDA cannot be used here" in run.stdout.str()


WORKER = HEADER + """
import ctypes, time

@pytest.mark.leakgate(worker=True)
def test_leak_in_worker(leakgate):
    tensor = leakgate.sentinel("tensor", 1 << 20)

    @model.kernel
    def kernel():
        pass

@pytest.mark.leakgate(worker=True)
def test_clean_in_worker(leakgate):
    tensor = leakgate.sentinel("tensor", 1 << 20)

    @clean.kernel
    def kernel():
        pass

@pytest.mark.leakgate(worker=True)
def test_crashes():
    ctypes.string_at(0)

@pytest.mark.leakgate(worker=True, timeout=2)
def test_hangs():
    time.sleep(60)

@pytest.mark.leakgate(worker=True)
def test_skips_in_worker():
    pytest.skip("not here")

@pytest.mark.leakgate(worker=True)
def test_fails_in_worker():
    assert 2 + 2 == 5

def test_after_them_all():
    pass
"""


def test_the_worker_option_keeps_every_other_result(pytester):
    pytester.makepyfile(WORKER)
    run = pytester.runpytest_subprocess("-rA", "--junitxml=report.xml")
    run.assert_outcomes(passed=2, failed=4, skipped=1)
    output = run.stdout.str()
    assert "was killed by SIGSEGV before it reported" in output, output
    assert "ran past its timeout of 2 s and was killed" in output, output
    assert KERNEL in output and "cur_frame" in output, output
    assert "assert (2 + 2) == 5" in output or "assert 4 == 5" in output, output
    tree = ElementTree.parse(pytester.path / "report.xml")
    cases = {case.get("name"): case for case in tree.iter("testcase")}
    assert {p.get("name"): p.get("value") for p in cases["test_leak_in_worker"].iter("property")}[
        "leakgate.frame_cycles"] == "1"


DAEMON = """
import os, sys, time
import pytest

@pytest.mark.leakgate(worker=True)
def test_starts_a_daemon(tmp_path_factory):
    if os.fork() == 0:          # the daemon idiom: fork, setsid, fork again, parent leaves
        os.setsid()
        if os.fork() == 0:
            with open(os.environ["DAEMON_PID_FILE"], "w") as f:
                f.write(str(os.getpid()))
            time.sleep(300)
        os._exit(0)
    for _ in range(200):
        if os.path.exists(os.environ["DAEMON_PID_FILE"]):
            break
        time.sleep(0.05)
"""


def test_a_daemon_a_worker_test_starts_does_not_outlive_it(pytester, monkeypatch, tmp_path):
    pid_file = tmp_path / "daemon.pid"
    monkeypatch.setenv("DAEMON_PID_FILE", str(pid_file))
    pytester.makepyfile(DAEMON)
    run = pytester.runpytest_subprocess("-rA")
    run.assert_outcomes(passed=1)
    pid = int(pid_file.read_text())
    for _ in range(50):  # a killed process is reaped by the worker before it exits
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"the daemon {pid} the test started outlived pytest")


def test_unittest_methods_are_measured_too(pytester):
    pytester.makepyfile(HEADER + """
import unittest

class Decorating(unittest.TestCase):
    def test_leak(self):
        @model.kernel
        def kernel():
            pass

    def test_clean(self):
        @clean.kernel
        def kernel():
            pass
""")
    pytester.runpytest_subprocess().assert_outcomes(passed=2)
    run = pytester.runpytest_subprocess("--leakgate")
    run.assert_outcomes(passed=1, failed=1)
    assert "test_leak" in run.stdout.str() and "cur_frame" in run.stdout.str()


UNITTEST_AND_OUTCOMES = HEADER + """
import sys
import unittest

KEPT = []

class Decorating(unittest.TestCase):
    def setUp(self):
        self.kernels = []

    def test_leak(self):
        @model.kernel
        def kernel():
            pass

    def test_clean(self):
        @clean.kernel
        def kernel():
            pass

    def test_fails(self):
        self.assertEqual(2 + 2, 5)

    @unittest.skip("no device here")
    def test_skipped(self):
        pass

    def test_skips_itself(self):
        self.skipTest("needs CUDA 12")

    @unittest.expectedFailure
    def test_expected_to_fail(self):
        self.assertTrue(False)

@unittest.skip("the whole class: no GPU")
class SkippedClass(unittest.TestCase):
    def test_anything(self):
        pass

def test_keeps_its_frame():
    KEPT.append(sys._getframe())

def test_raises_unittest_skip():
    raise unittest.SkipTest("skipped the unittest way")

@pytest.mark.xfail(reason="known: issue 7", raises=ZeroDivisionError)
def test_xfails_on_the_marker():
    1 / 0

@pytest.mark.xfail(reason="known: issue 8", raises=ZeroDivisionError)
def test_fails_otherwise_than_its_xfail_marker_expects():
    assert False, "not a ZeroDivisionError"

def test_xfails_in_the_body():
    pytest.xfail("the body says so")
"""


def _summary(run):
    """The -rA short summary: each test's outcome word, and each skip's reason."""
    outcomes, skips = {}, []
    for line in run.stdout.lines:
        word, _, rest = line.partition(" ")
        if word == "SKIPPED":
            skips.append(rest.split(": ", 1)[1])
        elif word in ("PASSED", "FAILED", "XFAIL", "XPASS", "ERROR") and "::" in rest:
            test, _, reason = rest.partition(" - ")
            outcomes[test.split("::", 1)[1]] = (word, reason)
    return outcomes, sorted(skips)


@pytest.mark.parametrize("worker", [False, True], ids=["in-process", "worker"])
def test_unittest_tests_skips_and_xfails_keep_their_outcomes_and_reasons(pytester, worker):
    # GIVEN unittest.TestCase tests (passing, failing, skipped by decorator, by skipTest and on
    # the class, an expected failure) and test functions that skip and xfail, WHEN run under
    # --leakgate, in-process or with --leakgate-worker, THEN each keeps its outcome and reason,
    # and the leak and the retained frame fail as leakgate's findings.
    pytester.makepyfile(UNITTEST_AND_OUTCOMES)
    plain = pytester.runpytest_subprocess("-rA", "-p", "no:cacheprovider")
    plain.assert_outcomes(passed=3, failed=2, skipped=4, xfailed=3)
    options = ["-rA", "-p", "no:cacheprovider", "--leakgate"] + (["--leakgate-worker"] if worker else [])
    run = pytester.runpytest_subprocess(*options)
    run.assert_outcomes(passed=1, failed=4, skipped=4, xfailed=3)
    outcomes, skips = _summary(run)
    assert skips == sorted(["no device here", "needs CUDA 12", "the whole class: no GPU",
                            "skipped the unittest way"]), skips
    assert outcomes["Decorating::test_clean"][0] == "PASSED"
    assert outcomes["Decorating::test_expected_to_fail"][0] == "XFAIL"
    assert outcomes["test_xfails_on_the_marker"] == ("XFAIL", "known: issue 7")
    assert outcomes["test_xfails_in_the_body"] == ("XFAIL", "the body says so")
    for test in ("Decorating::test_fails", "Decorating::test_leak", "test_keeps_its_frame",
                 "test_fails_otherwise_than_its_xfail_marker_expects"):
        assert outcomes[test][0] == "FAILED", outcomes
    output = run.stdout.str()
    assert "cur_frame" in output and "KEPT[0] holds it" in output, output
    assert "4 != 5" in output and "not a ZeroDivisionError" in output, output
    assert "2 failed on leakgate's limits" in output, output


def test_held_true_fails_a_test_that_grows_a_library_cache(pytester):
    pytester.makepyfile(cachelib="""
_seen = {}

def remember(key):
    _seen.setdefault(key, bytearray(1024))
""")
    pytester.makepyfile("""
import pytest
import cachelib

@pytest.mark.leakgate(held=True)
def test_grows():
    for key in range(1500):
        cachelib.remember(("grows", key))

@pytest.mark.leakgate(held=True)
def test_bounded():
    for _ in range(1500):
        cachelib.remember("one key")

@pytest.mark.leakgate
def test_grows_unjudged():
    for key in range(1500):
        cachelib.remember(("unjudged", key))
""")
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    run.assert_outcomes(passed=2, failed=1)
    assert "held growth" in run.stdout.str() and "cachelib._seen" in run.stdout.str()
    # --leakgate-held asks it of every measured test.
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--leakgate-held").assert_outcomes(
        passed=1, failed=2)


NESTED = HEADER + """
import ctypes

def clean_call():
    return 7 + 1

def leaky_call():
    ctypes.cast(ctypes.pointer(ctypes.c_int(7)), ctypes.c_void_p)

def leaks_a_frame_cycle():
    @model.kernel
    def kernel():
        pass

@pytest.mark.leakgate
def test_helpers_inside_a_measured_test(leakgate):
    figures = leakgate.per_call(clean_call, calls=200)
    assert figures.cyclic_garbage == 0
    leakgate.assert_per_call(clean_call, calls=200, cyclic_garbage=0)
    leakgate.assert_clean(leakgate.measure(clean_call))
    with leakgate.region("block") as block:
        clean_call()
    assert block.result.valid
    with pytest.raises(AssertionError, match="cyclic-garbage objects per call"):
        leakgate.assert_per_call(leaky_call, calls=200, cyclic_garbage=0)

def test_inner_leak(leakgate):
    result = leakgate.measure(leaks_a_frame_cycle)
    assert len(result.frame_cycles) == 1  # the inner region judged it

def test_outer_leak_inner_clean(leakgate):
    leaks_a_frame_cycle()
    leakgate.assert_per_call(clean_call, calls=200, cyclic_garbage=0)  # passes: not its garbage
"""


def test_the_fixtures_helpers_nest_inside_a_measured_test(pytester):
    # GIVEN tests that use the fixture's regions inside a test that --leakgate measures, THEN the
    # helpers work there; an inner leak fails the inner region and the test, naming the inner
    # region; a leak of the test's own beside a clean inner region fails the test only.
    pytester.makepyfile(NESTED)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=3)
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--leakgate", "-rA")
    run.assert_outcomes(passed=1, failed=2)
    output = run.stdout.str()
    assert "regions do not nest" not in output, output
    inner, outer = output.split("_ test_inner_leak _")[1].split("_ test_outer_leak_inner_clean _")
    outer = outer.split("\n=")[0]  # its own section: the summaries below quote every failure (pytest 9.2 in full)
    assert "in region `leaks_a_frame_cycle` inside it" in inner and "cur_frame" in inner, inner
    assert "cur_frame" in outer and "inside it" not in outer, outer
    assert "AssertionError" not in outer, outer  # the inner assert_per_call passed


MANY_CULPRITS = HEADER + """
import gc, inspect

def keeps_a(fn):
    frame_a = inspect.currentframe()
    return fn

def keeps_b(fn):
    frame_b = inspect.currentframe()
    return fn

def test_three_culprits(leakgate):
    data = [leakgate.sentinel(f"tensor{i}", 4096) for i in range(6)]

    @keeps_a
    def one():
        pass

    @keeps_b
    def two():
        pass

    @model.kernel
    def three():
        pass

def test_the_models_culprit_again():
    @model.kernel
    def kernel():
        pass

def test_enables_gc():
    gc.enable()

def test_skips():
    pytest.skip("not here")

def test_clean():
    pass
"""


def sections(output):
    """Each failure's section of pytest's output, by test name."""
    found = {}
    for part in output.split("\n_")[1:]:
        header, _, body = part.partition("\n")
        name = header.strip("_ ")
        found[name] = body.split("\n=")[0].rstrip("\n")
    return found


def test_failures_are_short_and_the_session_ends_with_a_summary_of_culprits(pytester):
    # GIVEN a session with a test of three culprits and six sentinels, another with one of those
    # culprits, one that collects, one that skips and a clean one, WHEN --leakgate measures them,
    # THEN each failure shows at most about 25 lines, "could not measure" says its reason once, and
    # the summary counts the tests and names each culprit once with its number of tests.
    pytester.makepyfile(MANY_CULPRITS)
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--leakgate")
    run.assert_outcomes(passed=1, failed=3, skipped=1)
    output = run.stdout.str()
    failures = sections(output)
    for name in ("test_three_culprits", "test_the_models_culprit_again", "test_enables_gc"):
        assert len(failures[name].splitlines()) <= 25, failures[name]
    three = failures["test_three_culprits"]
    assert "and 2 more findings:" in three and "and 4 more sentinels" in three, three
    assert "6 sentinels were freed-by-gc-only (`tensor0`, `tensor1`, `tensor2` and 3 more" in three, three
    assert "PASS " not in three and "fix:" in three, three
    assert failures["test_enables_gc"].count("re-enabled the cyclic GC") == 1, failures["test_enables_gc"]
    summary = output.split("= leakgate =")[1].split("\n=")[0]
    assert ("5 measured tests: 1 clean, 2 failed on leakgate's limits, 1 could not be measured, "
            "1 not measured") in summary, summary
    culprits = [line.split(None, 1) for line in summary.splitlines() if line.startswith("  ")]
    assert [count for count, _ in culprits[:3]] == ["2", "1", "1"], summary
    assert KERNEL in culprits[0][1] and "cur_frame" in culprits[0][1], summary
    assert sum(KERNEL in culprit for _, culprit in culprits) == 1, summary
    assert "could not measure, by reason:" in summary and "test_enables_gc" in summary, summary


REPORTED = HEADER + """
import sys

KEPT = []

def test_leaks():
    @model.kernel
    def kernel():
        pass

def test_clean():
    @clean.kernel
    def kernel():
        pass

@pytest.mark.parametrize("name", ["a/b c", "a_b_c", "ünï:*?"])
def test_odd_ids(name):
    KEPT.append(sys._getframe())
    KEPT.clear()

def test_enables_gc():
    import gc
    gc.enable()

def test_raises():
    raise ValueError("its own failure")
"""


@pytest.mark.parametrize("worker", [False, True], ids=["in-process", "worker"])
def test_leakgate_report_writes_each_measured_tests_report_and_an_index(pytester, worker):
    # GIVEN tests that leak, pass, have ids no file system takes as they are, cannot be measured
    # and raise, WHEN run with --leakgate-report DIR, THEN each measured test's schema leakgate/1
    # report is a file of its own in DIR, the index lists every test with its outcome and file, and
    # a failure names its file.
    pytester.makepyfile(test_reported=REPORTED)
    options = ["-p", "no:cacheprovider", "--leakgate", "--leakgate-report", "out/reports"]
    run = pytester.runpytest_subprocess(*options, *(["--leakgate-worker"] if worker else []))
    run.assert_outcomes(passed=4, failed=3)
    directory = pytester.path / "out/reports"
    index = json.loads((directory / "index.json").read_text())
    assert index["schema"] == "leakgate-pytest-session/1"
    tests = {entry["nodeid"].split("::", 1)[1]: entry for entry in index["tests"]}
    assert {name: entry["outcome"] for name, entry in tests.items()} == {
        "test_leaks": "failed", "test_clean": "clean", "test_odd_ids[a/b c]": "clean",
        "test_odd_ids[a_b_c]": "clean", "test_odd_ids[\\xfcn\\xef:*?]": "clean",
        "test_enables_gc": "invalid", "test_raises": "not-measured"}
    assert index["summary"] == {"measured": 7, "clean": 4, "failed": 1, "invalid": 1, "not_measured": 1}
    files = sorted(path.name for path in directory.iterdir() if path.name != "index.json")
    assert len(files) == 6 and len(set(files)) == 6, files  # each measured test's, none for raises
    for name, entry in tests.items():
        if entry["report"] is None:
            assert name == "test_raises"
            continue
        assert re.fullmatch(r"[A-Za-z0-9._-]+\.json", entry["report"]), entry["report"]
        report = json.loads((directory / entry["report"]).read_text())
        assert report["schema"] == "leakgate/1" and report["command"] == "region"
        assert report["results"][0]["subject"] == entry["nodeid"]
    leaks = json.loads((directory / tests["test_leaks"]["report"]).read_text())
    assert [f["kind"] for f in leaks["findings"]] == ["frame-cycle"] and KERNEL in leaks["findings"][0]["summary"]
    assert len(leaks["findings"][0]["frames"]) > 5  # the whole chain, which the failure cuts
    assert tests["test_leaks"]["culprits"] == [leaks["findings"][0]["summary"]]
    output = run.stdout.str()
    assert f"(all in out/reports/{tests['test_leaks']['report']})" in output, output
    assert f"the whole report: out/reports/{tests['test_enables_gc']['report']}" in output, output
    assert "reports: " in output and "index.json" in output


ACCEPTING = HEADER + """
import sys

KEPT = []

def keeps_its_frame():
    KEPT.append(sys._getframe())

def test_the_models_known_cycle():
    @model.kernel
    def kernel():
        pass

@pytest.mark.leakgate(accept={"keeps_its_frame": "kept on purpose: the debugger's frame list"})
def test_keeps_a_frame_on_purpose():
    keeps_its_frame()

@pytest.mark.leakgate(accept={"keeps_its_frame": "was kept once; fixed since"})
def test_no_longer_keeps_it():
    pass

def test_known_cycle_and_a_new_frame():
    @model.kernel
    def kernel():
        pass
    keeps_its_frame()
"""

PYPROJECT = f"""
[tool.leakgate.accept]
"frame_cycle_461.py:{KERNEL}" = "the bundled 4.6.1 model: its cycle is the point of it"
"gone.py:fixed_upstream" = "fixed upstream in 2.0"
"""


def test_accepted_findings_pass_are_reported_as_accepted_and_so_are_acceptances_that_found_nothing(pytester):
    # GIVEN pyproject.toml accepting the model's cycle and a culprit no test has, and markers
    # accepting a retained frame (one test keeps it, one no longer does), WHEN --leakgate measures,
    # THEN the accepted findings pass, with their reasons in the summary, the JUnit properties and
    # the index; a finding not accepted still fails, naming what was accepted beside it; and each
    # acceptance that found nothing is reported.
    pytester.makepyfile(test_accepting=ACCEPTING)
    pytester.makefile(".toml", pyproject=PYPROJECT)
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--leakgate", "--junitxml=report.xml",
                                        "--leakgate-report", "reports")
    run.assert_outcomes(passed=3, failed=1)
    output = run.stdout.str()
    failure = sections(output)["test_known_cycle_and_a_new_frame"]
    assert "retained frame" in failure and "keeps_its_frame" in failure, failure
    assert (f"accepted here: `frame_cycle_461.py:{KERNEL}` (the bundled 4.6.1 model: its cycle is "
            "the point of it)") in failure, failure
    summary = output.split("= leakgate =")[1].split("\n=")[0]
    assert "accepted findings (2)" in summary, summary
    assert "the bundled 4.6.1 model: its cycle is the point of it" in summary, summary
    assert "kept on purpose: the debugger's frame list" in summary, summary
    assert "accepted but not found: `gone.py:fixed_upstream`" in summary, summary
    assert ("accepted but not found in test_accepting.py::test_no_longer_keeps_it: `keeps_its_frame` "
            "(was kept once; fixed since)") in summary, summary
    tree = ElementTree.parse(pytester.path / "report.xml")
    properties = {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
                  for case in tree.iter("testcase")}
    assert properties["test_the_models_known_cycle"]["leakgate.accepted"].startswith(
        f"frame_cycle_461.py:{KERNEL}: the bundled")
    assert properties["test_the_models_known_cycle"]["leakgate.frame_cycles"] == "0"
    index = json.loads((pytester.path / "reports/index.json").read_text())
    assert {a["culprit"] for a in index["accepted"]} == {f"frame_cycle_461.py:{KERNEL}", "keeps_its_frame"}
    assert [a["culprit"] for a in index["accepted_not_found"]] == ["gone.py:fixed_upstream", "keeps_its_frame"]
    by_test = {entry["nodeid"].split("::")[1]: entry for entry in index["tests"]}
    assert by_test["test_the_models_known_cycle"]["outcome"] == "clean"
    assert by_test["test_the_models_known_cycle"]["accepted"][0]["reason"].startswith("the bundled")


@pytest.mark.parametrize("table, error", [
    ('"ModelDSL.kernel" = ""', "expected the reason it is accepted"),
    ('"ModelDSL.kernel" = 3', "expected the reason it is accepted"),
    ('"ModelDSL.kernel" = ["why"]', "expected the reason it is accepted"),
])
def test_an_acceptance_without_a_reason_is_a_usage_error(pytester, table, error):
    pytester.makepyfile("def test_nothing():\n    pass\n")
    pytester.makefile(".toml", pyproject=f"[tool.leakgate.accept]\n{table}\n")
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--leakgate")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    assert error in run.stderr.str() and "pyproject.toml" in run.stderr.str(), run.stderr.str()


def test_a_marker_acceptance_without_a_reason_is_that_tests_error(pytester):
    pytester.makepyfile("""
import pytest

@pytest.mark.leakgate(accept={"kernel": ""})
def test_no_reason():
    pass
""")
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    run.assert_outcomes(errors=1)
    assert "@pytest.mark.leakgate: accept: 'kernel': expected the reason it is accepted" in run.stdout.str()
