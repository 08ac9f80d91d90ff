"""leakgate's pytest plugin (entry point `pytest11: leakgate`; `-p no:leakgate` disables it).

    @pytest.mark.leakgate(frame_cycles=0, sentinels="freed-by-refcount")
    def test_decorating_frees_the_callers_locals(leakgate):
        tensor = leakgate.sentinel("tensor", 64 << 20)
        @dsl.kernel
        def kernel(): ...

A marked test's body (the test function's call, not its fixtures) runs in a region: gc disabled,
then the three reads after it returns. A limit it breaks fails the test with leakgate's
explanation; a measurement that could not be made (a collection leakgate did not start) fails it
too, never passes it. `--leakgate` measures every test with the default limits. The figures go to
the test's user_properties, so `--junitxml` carries them. `worker=True` (or `--leakgate-worker`)
runs the measured call in a forked worker process: a crash or a hang there fails that test only.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import select
import signal
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import pytest

from leakgate_dsl import _api, _native
from leakgate_dsl._results import Result, result_from

# The marker's keywords and their defaults (the limits of _api.violations, and how to run).
LIMITS = {
    "frame_cycles": 0,
    "retained_frames": 0,
    "sentinels": "freed-by-refcount",
    "allocations": None,
    "net_blocks": None,
    "cyclic_garbage": None,
}
RUN_OPTIONS = {"worker": False, "timeout": 300.0, "held": False}
MARKER_DOC = ("leakgate(frame_cycles=0, retained_frames=0, sentinels='freed-by-refcount', "
              "allocations=None, net_blocks=None, cyclic_garbage=None, worker=False, timeout=300, held=False): "
              "measure the test's body with leakgate under gc.disable() and fail it on a frame cycle, "
              "a retained frame or a sentinel that outlived its frame (None: not judged); held=True "
              "also fails it on a library-held container its body grew (held-growth)")


@dataclass(frozen=True)
class Settings:
    limits: dict
    worker: bool
    timeout: float
    held: bool = False


_SETTINGS = pytest.StashKey[Optional[Settings]]()


@dataclass
class Tally:
    """What the session's measured tests came to, for the summary at its end."""

    clean: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    invalid: dict = field(default_factory=dict)   # reason -> node ids
    raised: list = field(default_factory=list)    # the body raised (failed, skipped): not measured
    culprits: dict = field(default_factory=dict)  # a finding's summary -> node ids
    no_culprit: list = field(default_factory=list)  # failed on sentinels or figures, no finding

    @property
    def measured(self) -> int:
        return len(self.clean) + len(self.failed) + sum(map(len, self.invalid.values())) + len(self.raised)


_TALLY = pytest.StashKey[Tally]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("leakgate", "leakgate: memory kept alive under gc.disable()")
    group.addoption("--leakgate", action="store_true", default=False,
                    help="measure every test's body: fail it on frame cycles, retained frames and "
                         "sentinels that outlived their frames")
    group.addoption("--leakgate-worker", action="store_true", default=False,
                    help="run each measured test's body in a forked worker process (a crash or hang "
                         "fails that test only)")
    group.addoption("--leakgate-held", action="store_true", default=False,
                    help="also judge held growth: fail a measured test whose body grew a container a "
                         "library keeps by 1,000 entries or 64 MiB")
    group.addoption("--leakgate-timeout", type=float, default=None,
                    help="seconds a worker process may run (default: the marker's timeout, 300)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_DOC)
    config.stash[_TALLY] = Tally()
    config.pluginmanager.register(WorkerCall(), "leakgate-worker")


def _settings_of(item: pytest.Item) -> Optional[Settings]:
    """The item's settings, or None when it is not measured. Raises ValueError naming what is
    wrong with the marker (pytest_runtest_setup makes it that test's error)."""
    marker = item.get_closest_marker("leakgate")
    config = item.config
    if marker is None and not config.getoption("--leakgate"):
        return None
    keywords = dict(marker.kwargs) if marker else {}
    if marker and marker.args:
        raise ValueError(f"@pytest.mark.leakgate takes keywords only, got positional {marker.args!r}")
    unknown = sorted(set(keywords) - set(LIMITS) - set(RUN_OPTIONS))
    if unknown:
        raise ValueError(f"@pytest.mark.leakgate: unknown keyword{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(unknown)} (known: {', '.join([*LIMITS, *RUN_OPTIONS])})")
    limits = {name: keywords.get(name, default) for name, default in LIMITS.items()}
    for name in ("frame_cycles", "retained_frames", "allocations", "net_blocks", "cyclic_garbage"):
        value = limits[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ValueError(f"@pytest.mark.leakgate: {name} must be an int >= 0 or None, got {value!r}")
    if limits["sentinels"] is not None and limits["sentinels"] not in _api.SENTINEL_RULES:
        raise ValueError(f"@pytest.mark.leakgate: sentinels must be one of "
                         f"{', '.join(map(repr, _api.SENTINEL_RULES))} or None, got {limits['sentinels']!r}")
    worker = bool(keywords.get("worker", False)) or config.getoption("--leakgate-worker")
    timeout = config.getoption("--leakgate-timeout") or keywords.get("timeout", RUN_OPTIONS["timeout"])
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"@pytest.mark.leakgate: timeout must be a positive number of seconds, got {timeout!r}")
    held = keywords.get("held", False)
    if not isinstance(held, bool):
        raise ValueError(f"@pytest.mark.leakgate: held must be True or False, got {held!r}")
    return Settings(limits, worker, float(timeout), held or config.getoption("--leakgate-held"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    try:
        item.stash[_SETTINGS] = _settings_of(item)
    except ValueError as error:
        item.stash[_SETTINGS] = None
        pytest.fail(str(error), pytrace=False)


def _record(item: pytest.Item, result: Result) -> None:
    """The figures as the test's user properties (JUnit <property> elements)."""
    properties = [
        ("leakgate.valid", result.valid),
        ("leakgate.frame_cycles", len(result.frame_cycles)),
        ("leakgate.retained_frames", len(result.retained_frames)),
        ("leakgate.pinned_bytes", result.pinned_bytes),
    ]
    for name, value in (("allocations", result.allocations), ("net_blocks", result.net_blocks),
                        ("cyclic_garbage", result.cyclic_garbage)):
        if value is not None:
            properties.append((f"leakgate.{name}", value))
    for verdict in result.sentinels:
        properties.append((f"leakgate.sentinel.{verdict.label}", verdict.verdict))
    culprits = result.frame_cycles or result.retained_frames
    if culprits and culprits[0].culprit:
        culprit = culprits[0].culprit
        properties.append(("leakgate.culprit", f"{culprit.function} ({culprit.file}:{culprit.line})"))
        properties.append(("leakgate.locals", ",".join(culprits[0].locals)))
    if result.error:
        properties.append(("leakgate.error", result.error))
    item.user_properties.extend(properties)


# A failure shows at most about 25 lines: the verdict, the checks that did not pass, and the first
# finding (its culprit, path, bytes and fix) with the first frames of its chain. The whole
# explanation is the Result's, as the in-process API gives it.
_CHAIN_FRAMES = 5
_MORE_SENTINELS = 2
_MORE_FINDINGS = 3
_HEADLINE_ITEMS = 3


def _concise(text: str) -> str:
    """The region's text cut to what a failure needs (see _CHAIN_FRAMES): the lines of checks that
    passed or were skipped, all but a few sentinels, the frames past the first few and the
    findings past the first (each named by its first line) are left out."""
    blocks = text.strip("\n").split("\n\n")
    head, findings = blocks[0].splitlines(), blocks[1:]
    kept = head[:1]
    sentinels = 0
    for line in head[1:]:
        if line.startswith("  ") and line.split()[0] in ("PASS", "SKIP"):
            continue
        if line.startswith("    "):  # one sentinel of the list under "sentinels: ..."
            sentinels += 1
            if sentinels > _MORE_SENTINELS:
                continue
        kept.append(line)
    if sentinels > _MORE_SENTINELS:
        kept.append(f"    ... and {sentinels - _MORE_SENTINELS} more sentinels")
    if findings:
        kept.append("")
        frames, cut, more = 0, 0, None
        for line in findings[0].splitlines():
            if line.startswith("    "):  # one frame of the chain, or the line counting the rest
                found = re.match(r"\s+\.\.\. and (\d+) more(.*?)(?: \(all in the JSON report\))?$", line)
                if found:
                    more = (int(found.group(1)), found.group(2))
                    continue
                frames += 1
                if frames > _CHAIN_FRAMES:
                    cut += 1
                    continue
            elif cut or more:
                rest, tail = (more[0] if more else 0) + cut, (more[1] if more else "")
                kept.append(f"    ... and {rest} more{tail}")
                cut, more = 0, None
            kept.append(line)
        others = []
        for block in findings[1:]:
            first = block.splitlines()[0]
            if first not in others:
                others.append(first)
        if others:
            kept.append("")
            kept.append(f"and {len(findings) - 1} more finding{'s' if len(findings) > 2 else ''}:")
            kept.extend(f"  {line}" for line in others[:_MORE_FINDINGS])
            if len(others) > _MORE_FINDINGS:
                kept.append(f"  ... and {len(others) - _MORE_FINDINGS} more")
    return "\n".join(kept)


def _headline(found: list) -> str:
    """The violations in one line: the sentinels of one verdict together, at most a few items."""
    items, verdicts = [], {}
    for violation in found:
        sentinel = re.fullmatch(r"sentinel `(.+)` \((\d+) bytes, \w+\) was (\S+)", violation)
        if not sentinel:
            items.append(violation)
            continue
        label, nbytes, verdict = sentinel.groups()
        if verdict not in verdicts:
            verdicts[verdict] = []
            items.append(("sentinels", verdict))  # their place among the violations
        verdicts[verdict].append((label, int(nbytes), violation))
    for place, item in enumerate(items):
        if isinstance(item, str):
            continue
        sentinels = verdicts[item[1]]
        if len(sentinels) == 1:
            items[place] = sentinels[0][2]
        else:
            names = ", ".join(f"`{label}`" for label, _, _ in sentinels[:3])
            more = f" and {len(sentinels) - 3} more" if len(sentinels) > 3 else ""
            items[place] = (f"{len(sentinels)} sentinels were {item[1]} ({names}{more}; "
                            f"{sum(nbytes for _, nbytes, _ in sentinels)} bytes)")
    shown = items[:_HEADLINE_ITEMS]
    if len(items) > _HEADLINE_ITEMS:
        shown.append(f"and {len(items) - _HEADLINE_ITEMS} more")
    return "leakgate: " + "; ".join(shown)


def _judge(item: pytest.Item, settings: Settings, result: Result) -> None:
    _record(item, result)
    tally = item.config.stash.get(_TALLY, None) or Tally()
    try:
        found = _api.violations(result, **settings.limits)
    except _api.MeasurementError as error:
        invalid = str(error)  # failed outside the handler: one message, no exception chain
    else:
        invalid = None
    if invalid:
        # The reason once: every check is `error` with that same reason, so the text adds nothing.
        tally.invalid.setdefault(result.error or invalid, []).append(item.nodeid)
        pytest.fail(invalid, pytrace=False)
    if found:
        tally.failed.append(item.nodeid)
        culprits = dict.fromkeys(f.summary for f in result.frame_cycles + result.retained_frames)
        for culprit in culprits:
            tally.culprits.setdefault(culprit, []).append(item.nodeid)
        if not culprits:
            tally.no_culprit.append(item.nodeid)
        pytest.fail(_headline(found) + "\n\n" + _concise(result.text), pytrace=False)
    tally.clean.append(item.nodeid)


def _not_measured(item: pytest.Item) -> None:
    """The body raised (failed, skipped, xfailed): its own outcome, and nothing was measured."""
    tally = item.config.stash.get(_TALLY, None)
    if tally is not None:
        tally.raised.append(item.nodeid)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    """Once at the session's end: how many tests were measured and how they came out, and each
    distinct culprit once, with how many tests it failed."""
    tally = config.stash.get(_TALLY, None)
    if tally is None or tally.measured == 0:
        return
    write = terminalreporter.write_line
    terminalreporter.section("leakgate")
    invalid = sum(map(len, tally.invalid.values()))
    write(f"{tally.measured} measured test{'s' if tally.measured != 1 else ''}: {len(tally.clean)} clean, "
          f"{len(tally.failed)} failed on leakgate's limits, {invalid} could not be measured, "
          f"{len(tally.raised)} not measured (the test raised, failed or skipped on its own)")
    if tally.culprits:
        write(f"culprits ({len(tally.culprits)}), each with the number of tests it failed:")
        for culprit, tests in sorted(tally.culprits.items(), key=lambda item: (-len(item[1]), item[0])):
            write(f"  {len(tests):4}  {culprit}")
    if tally.no_culprit:
        write(f"failed on sentinels or figures alone: {len(tally.no_culprit)} (the first: {tally.no_culprit[0]})")
    if tally.invalid:
        write("could not measure, by reason:")
        for reason, tests in sorted(tally.invalid.items(), key=lambda item: -len(item[1])):
            write(f"  {len(tests):4}  {reason} (the first: {tests[0]})")


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    settings = pyfuncitem.stash.get(_SETTINGS, None)
    if settings is None or settings.worker:
        return (yield)  # not measured, or measured in a worker (WorkerCall below)
    # A body that raises is the test's own failure: the region measures nothing and re-raises.
    with _api.Region(pyfuncitem.nodeid, held=settings.held) as region:
        try:
            outcome = yield
        except BaseException:
            _not_measured(pyfuncitem)
            raise
    _judge(pyfuncitem, settings, region.result)
    return outcome


def _runs_through_pyfunc_call(item: pytest.Item) -> bool:
    """Whether the item's call is pytest_pyfunc_call (a test function), where the region holds the
    body alone. A unittest.TestCase method (pytest's TestCaseFunction) runs setUp, the test and
    tearDown in its own runtest instead, and other items (doctests, plug-in items) have their own."""
    return isinstance(item, pytest.Function) and type(item).runtest is pytest.Function.runtest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """The region around runtest() for items that never reach pytest_pyfunc_call, so that
    `--leakgate` and the marker measure them too instead of passing them unmeasured."""
    settings = item.stash.get(_SETTINGS, None)
    if settings is None or _runs_through_pyfunc_call(item):
        return (yield)
    if settings.worker:
        pytest.fail(f"leakgate: the worker option runs test functions; {item.nodeid} is a "
                    f"{type(item).__name__}, run in-process instead", pytrace=False)
    with _api.Region(item.nodeid, held=settings.held) as region:
        try:
            outcome = yield
        except BaseException:
            _not_measured(item)
            raise
    if getattr(item, "_excinfo", None):
        _not_measured(item)
        return outcome  # a unittest failure, recorded and reported by pytest: its own result
    _judge(item, settings, region.result)
    return outcome


# ---- the worker option -----------------------------------------------------------------------

_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def _become_subreaper() -> None:
    """What the test's processes leave behind in other sessions (a daemon's double fork and
    setsid) is reparented to the worker, not to init, so that the worker can end it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _end_descendants() -> None:
    """Kills, with their process groups, the worker's children still alive when the test is done:
    those it started and those it adopted as their subreaper, as the CLI does for its workers."""
    me = os.getpid()
    for _ in range(20):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
                parent = int(stat[stat.rindex(b")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent != me:
                continue
            found = True
            pid = int(entry)
            for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    kill()
                except OSError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        if not found:
            return


def _child(pyfuncitem: pytest.Function, write_fd: int, held: bool = False) -> None:
    """In the forked worker: the measured call, then one JSON message on `write_fd`."""
    try:
        os.setpgid(0, 0)  # its own group, so a timeout kills what it started too
    except OSError:
        pass
    _become_subreaper()
    message: dict[str, Any]
    try:
        testargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
        region = _api.Region(pyfuncitem.nodeid, held=held)
        region.__enter__()
        try:
            pyfuncitem.obj(**testargs)
        except BaseException:
            kind, error, tb = sys.exc_info()
            region.__exit__(kind, error, tb)
            outcome = ("skip" if isinstance(error, pytest.skip.Exception) else
                       "xfail" if isinstance(error, pytest.xfail.Exception) else "raised")
            message = {"outcome": outcome, "message": str(error),
                       "traceback": "".join(traceback.format_exception(kind, error, tb))}
            del kind, error, tb
        else:
            region.__exit__(None, None, None)
            message = {"outcome": "returned", "result": region.result.json, "text": region.result.text}
        del testargs
    except BaseException:
        message = {"outcome": "raised", "message": "leakgate's worker failed",
                   "traceback": traceback.format_exc()}
    data = json.dumps(message).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(write_fd, view):]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _run_in_worker(pyfuncitem: pytest.Function, settings: Settings) -> dict:
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads alive
        pid = os.fork()
    if pid == 0:
        status = 0
        try:
            os.close(read_fd)
            _child(pyfuncitem, write_fd, settings.held)
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            status = 70
        finally:
            try:
                _end_descendants()
            finally:
                os._exit(status)
    os.close(write_fd)
    chunks = []
    deadline = time.monotonic() + settings.timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        if timed_out:
            for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    kill()
                except OSError:
                    pass
        _, status = os.waitpid(pid, 0)
    where = f"leakgate's worker process (pid {pid}) for {pyfuncitem.nodeid}"
    if timed_out:
        pytest.fail(f"{where} ran past its timeout of {settings.timeout:g} s and was killed; "
                    "nothing was measured", pytrace=False)
    if os.WIFSIGNALED(status):
        pytest.fail(f"{where} was killed by {_signal_name(os.WTERMSIG(status))} before it reported; "
                    "nothing was measured", pytrace=False)
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        pytest.fail(f"{where} exited with status {code} without a result; nothing was measured",
                    pytrace=False)


class WorkerCall:
    """Runs a worker-measured test instead of pytest's own call (a plugin object of its own: this
    module already has a pytest_pyfunc_call, the in-process wrapper)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> Optional[bool]:
        settings = pyfuncitem.stash.get(_SETTINGS, None)
        if settings is None or not settings.worker:
            return None
        message = _run_in_worker(pyfuncitem, settings)
        if message["outcome"] != "returned":
            _not_measured(pyfuncitem)
        if message["outcome"] == "skip":
            pytest.skip(message["message"])
        if message["outcome"] == "xfail":
            pytest.xfail(message["message"])
        if message["outcome"] == "raised":
            pytest.fail(f"in leakgate's worker process the test raised:\n{message['traceback']}",
                        pytrace=False)
        result = result_from({"json": json.dumps(message["result"]), "text": message["text"]})
        _judge(pyfuncitem, settings, result)
        return True


# ---- the fixture -----------------------------------------------------------------------------

class Leakgate:
    """The `leakgate` fixture: sentinels, regions and the assertion helpers for one test. A device
    sentinel where CUDA cannot be used skips the test with the reason."""

    region = staticmethod(_api.region)
    measure = staticmethod(_api.measure)
    explain = staticmethod(_api.explain)
    per_call = staticmethod(_api.per_call)
    assert_clean = staticmethod(_api.assert_clean)
    assert_per_call = staticmethod(_api.assert_per_call)
    sentinel = staticmethod(_api.sentinel)
    track = staticmethod(_api.track)

    @staticmethod
    def device_sentinel(label: str, nbytes: int) -> "_native.DeviceSentinel":
        try:
            return _api.device_sentinel(label, nbytes)
        except _native.CudaUnavailable as error:
            pytest.skip(f"leakgate: no device sentinel, CUDA cannot be used here: {error}")


@pytest.fixture
def leakgate() -> Leakgate:
    """leakgate's sentinels and regions (see leakgate_dsl.pytest_plugin)."""
    return Leakgate()
