"""leakgate's pytest plugin (entry point `pytest11: leakgate`; `-p no:leakgate` disables it).

    @pytest.mark.leakgate(frame_cycles=0, sentinels="freed-by-refcount")
    def test_decorating_frees_the_callers_locals(leakgate):
        tensor = leakgate.sentinel("tensor", 64 << 20)
        @dsl.kernel
        def kernel(): ...

A marked test's body (the test function's call, not its fixtures) runs in a region: gc disabled,
then the three reads after it returns. A limit it breaks fails the test with leakgate's
explanation; a measurement that could not be made (gc re-enabled, a collection whose garbage
leakgate could not read) fails it too, never passes it. A body that collects is measured: what its
collection found is reported with the reads' findings. `--leakgate` measures every test with the default limits. The figures go to
the test's user_properties, so `--junitxml` carries them. `worker=True` (or `--leakgate-worker`)
runs the measured call in a forked worker process: a crash or a hang there fails that test only.
"""

from __future__ import annotations

import base64
import ctypes
import functools
import hashlib
import json
import os
import pickle
import re
import select
import signal
import sys
import time
import traceback
import unittest
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

import pytest

from leakgate_dsl import _accept, _api, _native
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
RUN_OPTIONS = {"worker": False, "timeout": 300.0, "held": False, "accept": None}
MARKER_DOC = ("leakgate(frame_cycles=0, retained_frames=0, sentinels='freed-by-refcount', "
              "allocations=None, net_blocks=None, cyclic_garbage=None, worker=False, timeout=300, held=False, "
              "accept=None): measure the test's body with leakgate under gc.disable() and fail it on a frame "
              "cycle, a retained frame or a sentinel that outlived its frame (None: not judged); held=True "
              "also fails it on a library-held container its body grew (held-growth); accept={culprit: "
              "reason} accepts the findings of those culprits, reported as accepted")


@dataclass(frozen=True)
class Settings:
    limits: dict
    worker: bool
    timeout: float
    held: bool = False
    accept: tuple = ()  # the marker's Acceptances


_SETTINGS = pytest.StashKey[Optional[Settings]]()

# Set in a forked worker (the worker option): the hooks that would measure the item again, or fork
# once more, leave it to the worker's own region.
_IN_WORKER = False


@dataclass
class Tally:
    """What the session's measured tests came to, for the summary at its end."""

    clean: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    invalid: dict = field(default_factory=dict)   # reason -> node ids
    raised: list = field(default_factory=list)    # the body raised (failed, skipped): not measured
    culprits: dict = field(default_factory=dict)  # a finding's summary -> node ids
    culprit_keys: dict = field(default_factory=dict)  # a finding's summary -> the key that accepts it
    no_culprit: list = field(default_factory=list)  # failed on sentinels or figures, no finding
    accepted: dict = field(default_factory=dict)  # (acceptance, finding summary) -> node ids
    unmatched: list = field(default_factory=list)  # (node id, a marker's acceptance it did not use)
    project_accept: tuple = ()                     # [tool.leakgate.accept] of pyproject.toml
    tests: list = field(default_factory=list)      # the session index's entries, in run order

    @property
    def measured(self) -> int:
        return len(self.clean) + len(self.failed) + sum(map(len, self.invalid.values())) + len(self.raised)


_TALLY = pytest.StashKey[Tally]()
_REPORT_DIR = pytest.StashKey[Optional[Path]]()


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
    group.addoption("--leakgate-report", metavar="DIR", default=None,
                    help="write each measured test's report (schema leakgate/1 JSON, as `leakgate --json` "
                         "writes it) into DIR, one file per test, and DIR/index.json for the session")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_DOC)
    tally = Tally()
    config.stash[_TALLY] = tally
    config.pluginmanager.register(WorkerCall(), "leakgate-worker")
    # The project's accepted findings: the nearest pyproject.toml at or above the rootdir, as
    # `leakgate lint` reads its own table.
    project = _accept.find_project_file(Path(config.rootpath))
    if project is not None:
        try:
            tally.project_accept = _accept.read_project_file(project)
        except ValueError as error:
            raise pytest.UsageError(f"leakgate: {error}") from None
    directory = config.getoption("--leakgate-report")
    config.stash[_REPORT_DIR] = None
    if directory:
        path = Path(config.invocation_params.dir, directory)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise pytest.UsageError(f"leakgate: --leakgate-report {directory}: {error}") from None
        config.stash[_REPORT_DIR] = path


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
    accept = _accept.parse(keywords["accept"], "@pytest.mark.leakgate: accept") if keywords.get("accept") else ()
    return Settings(limits, worker, float(timeout), held or config.getoption("--leakgate-held"), accept)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    try:
        item.stash[_SETTINGS] = _settings_of(item)
    except ValueError as error:
        item.stash[_SETTINGS] = None
        pytest.fail(str(error), pytrace=False)


def _record(item: pytest.Item, result: Result, accepted: list) -> None:
    """The figures as the test's user properties (JUnit <property> elements). `result`'s findings
    are those not accepted; `accepted` the others, each with its acceptance."""
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
    if accepted:
        properties.append(("leakgate.accepted", "; ".join(f"{a.culprit}: {a.reason}" for _, a in accepted)))
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


def _concise(text: str, report: str) -> str:
    """The region's text cut to what a failure needs (see _CHAIN_FRAMES): the lines of checks that
    passed or were skipped, all but a few sentinels, the frames past the first few and the
    findings past the first (each named by its first line) are left out. `report` says where the
    whole of it is: the line that counts the frames left out names it, or a last line does."""
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
                kept.append(f"    ... and {rest} more{tail} (all in {report})")
                cut, more, report = 0, None, ""
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
    if report:
        kept.extend(["", f"the whole report: {report}"])
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


def _report_name(nodeid: str) -> str:
    """A file name for the test's report: its node id with every character a file system or a
    shell might take amiss replaced, cut to a length any file system takes, and a digest of the
    whole id, so that ids that read alike after that still get a file each."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", nodeid).strip("._")[:100]
    return f"{readable}-{hashlib.sha1(nodeid.encode()).hexdigest()[:10]}.json"


def _save_report(item: pytest.Item, result: Result) -> Optional[Path]:
    """Writes the result's schema leakgate/1 document into the --leakgate-report directory; its
    path, or None without the option."""
    directory = item.config.stash.get(_REPORT_DIR, None)
    if directory is None or not result.report:
        return None
    path = directory / _report_name(item.nodeid)
    path.write_text(result.report, encoding="utf-8")
    return path


def _where_the_report_is(path: Optional[Path], config: pytest.Config) -> str:
    if path is None:
        return "the report --leakgate-report DIR writes"
    try:
        return str(path.relative_to(config.invocation_params.dir))
    except ValueError:
        return str(path)


def _index_entry(tally: Tally, item: pytest.Item, outcome: str, report: Optional[Path] = None,
                 **more: Any) -> None:
    entry = {"nodeid": item.nodeid, "outcome": outcome, "report": report.name if report else None}
    entry.update(more)
    tally.tests.append(entry)


def _judge(item: pytest.Item, settings: Settings, result: Result) -> None:
    tally = item.config.stash.get(_TALLY, None) or Tally()
    # Accepted findings leave the limits' count, and are reported as accepted with the reason.
    kept, accepted = _accept.split(result.findings, settings.accept + tally.project_accept)
    judged = replace(result, findings=tuple(kept)) if accepted else result
    _record(item, judged, accepted)
    report = _save_report(item, result)
    try:
        found = _api.violations(judged, **settings.limits)
    except _api.MeasurementError as error:
        invalid = str(error)  # failed outside the handler: one message, no exception chain
    else:
        invalid = None
    if invalid:
        # The reason once: every check is `error` with that same reason, so the text adds nothing.
        tally.invalid.setdefault(result.error or invalid, []).append(item.nodeid)
        _index_entry(tally, item, "invalid", report, error=invalid)
        pytest.fail(f"{invalid}\nthe whole report: {_where_the_report_is(report, item.config)}", pytrace=False)
    for finding, acceptance in accepted:
        tally.accepted.setdefault((acceptance, finding.summary), []).append(item.nodeid)
    used = {acceptance for _, acceptance in accepted}
    for acceptance in settings.accept:
        if acceptance not in used:  # the finding it accepted is gone: the acceptance can go too
            tally.unmatched.append((item.nodeid, acceptance))
    accepted_text = [{"culprit": acceptance.culprit, "reason": acceptance.reason, "finding": finding.summary}
                     for finding, acceptance in accepted]
    if found:
        tally.failed.append(item.nodeid)
        culprits = {f.summary: _accept.culprit_key(f) for f in judged.frame_cycles + judged.retained_frames}
        for culprit, key in culprits.items():
            tally.culprits.setdefault(culprit, []).append(item.nodeid)
            tally.culprit_keys[culprit] = key
        if not culprits:
            tally.no_culprit.append(item.nodeid)
        _index_entry(tally, item, "failed", report, violations=found, culprits=list(culprits),
                     accepted=accepted_text)
        lines = [_headline(found), "", _concise(judged.text, _where_the_report_is(report, item.config))]
        if accepted:
            lines.append("accepted here: " + "; ".join(f"`{a.culprit}` ({a.reason})" for _, a in accepted))
        pytest.fail("\n".join(lines), pytrace=False)
    tally.clean.append(item.nodeid)
    _index_entry(tally, item, "clean", report, accepted=accepted_text)


def _not_measured(item: pytest.Item) -> None:
    """The body raised (failed, skipped, xfailed): its own outcome, and nothing was measured."""
    tally = item.config.stash.get(_TALLY, None)
    if tally is not None:
        tally.raised.append(item.nodeid)
        _index_entry(tally, item, "not-measured")


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    """Once at the session's end: how many tests were measured and how they came out, each
    distinct culprit once with how many tests it failed, the accepted findings with their reasons,
    and the acceptances that found nothing to accept."""
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
        ranked = sorted(tally.culprits.items(), key=lambda item: (-len(item[1]), item[0]))
        for culprit, tests in ranked:
            write(f"  {len(tests):4}  {culprit}")
        key = next((tally.culprit_keys[culprit] for culprit, _ in ranked if tally.culprit_keys.get(culprit)), None)
        if key:
            write(f"a known finding is accepted by its culprit, with the reason, in pyproject.toml's "
                  f"{_accept.TABLE} (or the marker's accept=): \"{key}\" = \"<why>\"")
    if tally.no_culprit:
        write(f"failed on sentinels or figures alone: {len(tally.no_culprit)} (the first: {tally.no_culprit[0]})")
    if tally.invalid:
        write("could not measure, by reason:")
        for reason, tests in sorted(tally.invalid.items(), key=lambda item: -len(item[1])):
            write(f"  {len(tests):4}  {reason} (the first: {tests[0]})")
    if tally.accepted:
        write(f"accepted findings ({len(tally.accepted)}), not counted against the limits, each with the "
              "number of tests it was found in:")
        for (acceptance, finding), tests in sorted(tally.accepted.items(), key=lambda item: -len(item[1])):
            write(f"  {len(tests):4}  {finding}")
            write(f"        accepted as `{acceptance.culprit}` by {acceptance.source}: {acceptance.reason}")
    for acceptance in _gone(tally):
        write(f"accepted but not found: `{acceptance.culprit}` ({acceptance.source}: {acceptance.reason}); "
              "if it is fixed, remove the acceptance")
    for nodeid, acceptance in tally.unmatched:
        write(f"accepted but not found in {nodeid}: `{acceptance.culprit}` ({acceptance.reason}); "
              "if it is fixed, remove it from the marker")
    directory = config.stash.get(_REPORT_DIR, None)
    if directory is not None:
        write(f"reports: {directory / 'index.json'} and one file per measured test beside it")


def _gone(tally: Tally) -> list:
    """The pyproject.toml's acceptances that no measured test's finding matched (only when some
    test was measured validly: a session that measured nothing says nothing of them)."""
    if not (tally.clean or tally.failed):
        return []
    used = {acceptance for acceptance, _ in tally.accepted}
    return [acceptance for acceptance in tally.project_accept if acceptance not in used]


def pytest_sessionfinish(session: pytest.Session, exitstatus) -> None:
    """The --leakgate-report directory's index: every measured test with its outcome and its
    report's file, the culprits and the accepted findings across them."""
    config = session.config
    directory = config.stash.get(_REPORT_DIR, None)
    tally = config.stash.get(_TALLY, None)
    if directory is None or tally is None:
        return
    index = {
        "schema": "leakgate-pytest-session/1",
        "tool": {"name": "leakgate-dsl", "version": _native.__version__},
        "python": {"version": ".".join(map(str, sys.version_info[:3])), "executable": sys.executable},
        "reports": "one file per measured test, schema leakgate/1 (docs/reference/json.md)",
        "summary": {"measured": tally.measured, "clean": len(tally.clean), "failed": len(tally.failed),
                    "invalid": sum(map(len, tally.invalid.values())), "not_measured": len(tally.raised)},
        "culprits": [{"culprit": culprit, "accept_as": tally.culprit_keys.get(culprit), "tests": tests}
                     for culprit, tests in
                     sorted(tally.culprits.items(), key=lambda item: (-len(item[1]), item[0]))],
        "accepted": [{"culprit": acceptance.culprit, "reason": acceptance.reason, "source": acceptance.source,
                      "finding": finding, "tests": tests}
                     for (acceptance, finding), tests in tally.accepted.items()],
        "accepted_not_found": [{"culprit": a.culprit, "reason": a.reason, "source": a.source}
                               for a in _gone(tally)] +
                              [{"culprit": a.culprit, "reason": a.reason, "source": a.source, "test": nodeid}
                               for nodeid, a in tally.unmatched],
        "tests": tally.tests,
    }
    (directory / "index.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    settings = pyfuncitem.stash.get(_SETTINGS, None)
    if settings is None or settings.worker or _IN_WORKER:
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
        # pytest's own pytest_runtest_call calls item.runtest(): for this call it is the worker's,
        # which runs the item's own runtest in the forked process and reports what it came to.
        item.runtest = lambda: _take_worker_outcome(item, settings, _run_in_worker(item, settings))
        try:
            return (yield)
        finally:
            del item.runtest
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


def _outcome_of(kind, error, tb) -> dict:
    """What the test's own exception (or a unittest outcome it recorded) reports to pytest: a skip
    or an xfail with its reason, else the traceback as text and, where pickle can carry it, the
    exception itself (for an xfail marker's `raises`)."""
    skips = (pytest.skip.Exception, unittest.SkipTest)
    if isinstance(error, skips):
        reason = error.msg if isinstance(error, pytest.skip.Exception) else str(error)
        return {"outcome": "skip", "message": reason}
    if isinstance(error, pytest.xfail.Exception):
        return {"outcome": "xfail", "message": error.msg}
    if isinstance(error, pytest.fail.Exception) and not error.pytrace:
        text = error.msg
    else:
        text = "".join(traceback.format_exception(kind, error, tb))
    message = {"outcome": "raised", "message": str(error), "traceback": text}
    try:
        message["exception"] = base64.b64encode(pickle.dumps(error)).decode()
    except Exception:
        pass  # not picklable: the traceback alone
    return message


def _unittest_outcome(item: pytest.Item) -> Optional[dict]:
    """The outcome a unittest.TestCase run recorded instead of raising it (pytest's
    TestCaseFunction keeps failures, errors, skips and expected failures in `_excinfo`), or None
    when it passed."""
    recorded = getattr(item, "_excinfo", None)
    if not recorded:
        return None
    first = recorded[0]
    message = _outcome_of(first.type, first.value, first.tb)
    if len(recorded) > 1 and message["outcome"] == "raised":
        message["traceback"] += f"\n(and {len(recorded) - 1} more error{'s' if len(recorded) > 2 else ''} of this test)"
    return message


def _child(item: pytest.Item, write_fd: int, held: bool = False) -> None:
    """In the forked worker: the measured call, then one JSON message on `write_fd`. A test
    function is called with its fixtures' values; any other item (a unittest.TestCase method, a
    doctest) runs its own runtest(), setUp and tearDown included, as in-process."""
    global _IN_WORKER
    _IN_WORKER = True
    try:
        os.setpgid(0, 0)  # its own group, so a timeout kills what it started too
    except OSError:
        pass
    _become_subreaper()
    message: dict[str, Any]
    try:
        if _runs_through_pyfunc_call(item):
            testargs = {name: item.funcargs[name] for name in item._fixtureinfo.argnames}
            call = functools.partial(item.obj, **testargs)
            del testargs
        else:
            call = functools.partial(type(item).runtest, item)
        region = _api.Region(item.nodeid, held=held)
        region.__enter__()
        try:
            call()
        except BaseException:
            kind, error, tb = sys.exc_info()
            region.__exit__(kind, error, tb)
            message = _outcome_of(kind, error, tb)
            del kind, error, tb
        else:
            region.__exit__(None, None, None)
            message = _unittest_outcome(item) or {"outcome": "returned", "result": region.result.json,
                                                  "text": region.result.text, "report": region.result.report}
        del call
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


def _run_in_worker(item: pytest.Item, settings: Settings) -> dict:
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
            _child(item, write_fd, settings.held)
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
    where = f"leakgate's worker process (pid {pid}) for {item.nodeid}"
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


def _skip(reason: str) -> None:
    """Skips the test with the worker's reason, reported at the test's own location (as pytest
    reports a unittest skip) rather than at this line."""
    try:
        error = pytest.skip.Exception(reason, _use_item_location=True)
    except TypeError:  # a pytest without the keyword
        error = pytest.skip.Exception(reason)
    raise error


def _xfail_accepts(item: pytest.Item, error: BaseException) -> bool:
    """Whether the item's xfail marker takes `error` as its expected failure (no `raises`, or an
    instance of it), so that the exception the worker sent is raised here as it was there."""
    marker = item.get_closest_marker("xfail")
    if marker is None:
        return False
    raises = marker.kwargs.get("raises")
    return raises is None or isinstance(error, raises)


def _take_worker_outcome(item: pytest.Item, settings: Settings, message: dict) -> None:
    """The worker's message as this item's outcome: the verdict of what it measured, or the test's
    own skip, xfail or failure, with its reason."""
    outcome = message["outcome"]
    if outcome == "returned":
        _judge(item, settings, result_from({"json": json.dumps(message["result"]), "text": message["text"],
                                            "report": message.get("report", "")}))
        return
    _not_measured(item)
    if outcome == "skip":
        _skip(message["message"])
    if outcome == "xfail":
        pytest.xfail(message["message"])
    error = None
    if "exception" in message:
        try:
            error = pickle.loads(base64.b64decode(message["exception"]))
        except Exception:
            error = None
    if isinstance(error, BaseException) and _xfail_accepts(item, error):
        raise error
    pytest.fail(f"in leakgate's worker process the test raised:\n{message['traceback']}", pytrace=False)


class WorkerCall:
    """Runs a worker-measured test instead of pytest's own call (a plugin object of its own: this
    module already has a pytest_pyfunc_call, the in-process wrapper)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> Optional[bool]:
        settings = pyfuncitem.stash.get(_SETTINGS, None)
        if settings is None or not settings.worker or _IN_WORKER:
            return None
        _take_worker_outcome(pyfuncitem, settings, _run_in_worker(pyfuncitem, settings))
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
