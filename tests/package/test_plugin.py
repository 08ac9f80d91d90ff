"""The pytest plugin, through pytester in a fresh pytest process each: the marker, the fixture,
--leakgate, the figures in JUnit XML, the worker option, and pytest's own collections."""

import os
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


def test_pytests_own_collections_do_not_invalidate_but_the_bodys_do(pytester):
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
import pytest

@pytest.mark.leakgate
def test_clean_body():
    x = [1, 2, 3]

@pytest.mark.leakgate
def test_body_collects():
    gc.collect()
""")
    run = pytester.runpytest_subprocess("-rA")
    run.assert_outcomes(passed=1, failed=1)
    output = run.stdout.str()
    assert "could not measure" in output and "leakgate did not start" in output, output
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

def test_collects():
    gc.collect()

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
    for name in ("test_three_culprits", "test_the_models_culprit_again", "test_collects"):
        assert len(failures[name].splitlines()) <= 25, failures[name]
    three = failures["test_three_culprits"]
    assert "and 2 more findings:" in three and "and 4 more sentinels" in three, three
    assert "6 sentinels were freed-by-gc-only (`tensor0`, `tensor1`, `tensor2` and 3 more" in three, three
    assert "PASS " not in three and "fix:" in three, three
    assert failures["test_collects"].count("leakgate did not start") == 1, failures["test_collects"]
    summary = output.split("= leakgate =")[1].split("\n=")[0]
    assert ("5 measured tests: 1 clean, 2 failed on leakgate's limits, 1 could not be measured, "
            "1 not measured") in summary, summary
    culprits = [line.split(None, 1) for line in summary.splitlines() if line.startswith("  ")]
    assert [count for count, _ in culprits[:3]] == ["2", "1", "1"], summary
    assert KERNEL in culprits[0][1] and "cur_frame" in culprits[0][1], summary
    assert sum(KERNEL in culprit for _, culprit in culprits) == 1, summary
    assert "could not measure, by reason:" in summary and "test_collects" in summary, summary
