#!/usr/bin/env python3
"""Measures how existing Python tools handle leakgate's first task, and prints a Markdown table.

    python3 bench/compare/compare_tools.py [--cache-dir DIR] [--json FILE] [--runs 5]

The task (workload.py): with gc.disable(), a function holding a 64 MiB payload in a local
decorates a kernel with the DSL's decorator; the payload must be freed without gc.collect().
With fixtures/targets/frame_cycle_461.py it is not (ModelDSL.kernel keeps its own frame in the
local ``cur_frame``: a cycle that pins the caller's frame through f_back); with
fixtures/targets/temporary_back.py, the clean release, it is.

Each tool runs in its own subprocess (probe_*.py beside this file), in a throwaway venv that this
script makes with --python and fills from PyPI, once per model and --runs times each; a tool that
does not install, import or run is its row's "error: ..." and the other rows still run. Nothing is
claimed for a tool that is not read from what it printed:

- catches the cycle: the tool's check failed on the leaking model after running the code;
- clean variant passes: it did not fail on the clean model;
- names culprit / names local: ``ModelDSL.kernel`` (or the bare ``kernel`` of a frame, or a
  file:line inside it) and ``cur_frame`` found in the tool's own report of the leaking model;
- pinned bytes: a byte figure the tool reported for what stayed alive, against the 64 MiB;
- device memory: none of these tools reads GPU memory, so "no" unless a probe says otherwise;
- time: median (min-max) over the runs of the check on the leaking model, in the probe's own
  clock, or for pytest-memray the whole pytest process (the check is the run).

Standard library only. Exit codes: 0 the table was made (rows may still say "error"), 2 usage,
3 the venv could not be made or the task's ground truth did not hold.
"""

import argparse
import ast
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import workload  # noqa: E402  (beside this script; standard library only)

DEFAULT_PYTHON = "/root/.pyenv/versions/3.11.7/bin/python3"
PROBE_TIMEOUT_S = 180
VENV_NAME = "compare-venv"
MIB = 1 << 20
UNITS = {"B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3,
         "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
COLUMNS = ("tool", "catches the cycle", "clean variant passes", "names culprit", "names local",
           "pinned bytes", "device memory", "time")

# Each tool's distributions, installed together; a row whose install or import fails says so.
TOOL_PACKAGES = {
    "pytest-memray": (["pytest", "pytest-memray"], ["pytest", "pytest_memray", "memray"]),
    "numpy": (["numpy"], ["numpy"]),
    "refcycle": (["refcycle"], ["refcycle"]),
    "objgraph": (["objgraph"], ["objgraph"]),
}


# ---------------------------------------------------------------------------------------------
# What one probe run gave, and the table row made from a probe's runs.


@dataclass
class ProbeRun:
    """One subprocess run of a probe on one model."""

    returncode: int
    wall_seconds: float
    stdout: str
    stderr: str
    report: str = ""  # what the tool told its user about this model (its verdict text)
    result: dict = field(default_factory=dict)  # the probe's RESULT line; empty on failure
    error: str = ""  # why this run gave no measurement


@dataclass
class Row:
    """One line of the table, plus what it was read from (for --json)."""

    tool: str
    cells: dict
    notes: list = field(default_factory=list)
    details: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# A probe: how to run it and how to read what it printed.


@dataclass
class Probe:
    """A tool used one way. ``argv(python, model)`` builds the command line; ``read(run)`` fills
    run.report and run.result from its output (the RESULT protocol of workload.py by default)."""

    tool: str
    package: str  # key of TOOL_PACKAGES, or "" for none
    argv: object
    read: object = None
    pinned: object = None  # (leaking ProbeRun) -> cell text; default: "no"
    headline: object = None  # (report) -> one line that says what the tool said
    timed: str = "the check, in-process"
    env: dict = field(default_factory=dict)


def read_result_protocol(run):
    """The probes' protocol: the tool's report between two marker lines, then RESULT {json}."""
    out = run.stdout
    begin, end = out.find(workload.REPORT_BEGIN), out.find(workload.REPORT_END)
    if begin >= 0 and end > begin:
        run.report = out[begin + len(workload.REPORT_BEGIN):end].strip("\n")
    for line in reversed(out.splitlines()):
        if line.startswith(workload.RESULT_PREFIX):
            run.result = json.loads(line[len(workload.RESULT_PREFIX):])
            break
    if not run.result:
        run.error = f"probe exited {run.returncode} without a result: {last_line(run.stderr)}"


def read_pytest(run):
    """pytest's verdict is its exit code (0 passed, 1 failed); the tool's report of a failure is
    the test's section under FAILURES. The --memray summary below it is left out on purpose: it
    lists the biggest allocating functions at the peak, for the clean model as well, which is not
    an attribution of what leaked."""
    if run.returncode not in (0, 1):
        run.error = f"pytest exited {run.returncode}: {last_line(run.stdout + run.stderr)}"
        return
    failures = re.search(r"^=+ FAILURES =+$(.*?)^=+ ", run.stdout, re.S | re.M)
    run.report = failures.group(1).strip("\n") if failures else "passed"
    if run.returncode == 1 and "memray-" not in run.report:  # memray titles its sections so
        run.error = f"the test failed, but not by its memray marker: {last_line(run.report)}"
        return
    run.result = {"flagged": run.returncode == 1, "seconds": run.wall_seconds, "ran_workload": True}


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def bytes_from(number, unit):
    return float(number) * UNITS[unit]


def describe_bytes(count):
    share = 100.0 * count / workload.PAYLOAD_BYTES
    return f"{count / MIB:.1f} MiB ({share:.0f}% of the 64 MiB payload)"


def memray_leaked_bytes(run):
    sizes = [bytes_from(n, u) for n, u in
             re.findall(r"- ([\d.]+)([KMG]i?B|B) allocated here", run.report)]
    if not sizes:
        return "no"
    return describe_bytes(sum(sizes)) + ", at the payload's allocation site"


def memray_peak_bytes(run):
    peak = re.search(r"Total memory allocated: ([\d.]+)([KMG]i?B|B)", run.stdout)
    if not peak:
        return "no"
    return f"no: reports the peak, {bytes_from(*peak.groups()) / MIB:.1f} MiB, for both models"


def object_count(pattern):
    """Pinned-bytes cell of a tool that counts objects in the cycle but has no size for them."""

    def cell(run):
        found = re.search(pattern, run.report)
        return f"no: {found.group(1)} objects, no sizes" if found else "no"

    return cell


def first_match(*patterns):
    """Headline reader: the first of the patterns found in the report, else its last line."""

    def headline(report):
        for pattern in patterns:
            found = re.search(pattern, report, re.M)
            if found:
                return found.group(0).strip()
        return last_line(report)

    return headline


def numpy_precondition_headline(report):
    if "assert_(gc.isenabled())" in report:
        return "a bare AssertionError from its `assert_(gc.isenabled())` precondition"
    return first_match(r"^AssertionError.*")(report)


def compare_path(name):
    return os.path.join(HERE, name)


def pytest_argv(test_name):
    def argv(python, model):
        return [python, "-m", "pytest", "-p", "no:cacheprovider", "--memray", "--stacks=40",
                f"{compare_path('probe_memray_test.py')}::{test_name}"]

    return argv


def script_argv(script, *extra):
    def argv(python, model):
        return [python, compare_path(script), model, *extra]

    return argv


PROBES = [
    Probe("plain weakref assert (no tool; the ground truth)", "", script_argv("probe_reference.py"),
          headline=first_match(r"AssertionError.*")),
    Probe('pytest-memray `limit_leaks("1 MB")`', "pytest-memray",
          pytest_argv("test_decorating_frees_its_locals"), read=read_pytest,
          pinned=memray_leaked_bytes, headline=first_match(r"Test was allowed .*"),
          timed="whole pytest process", env={"PYTHONMALLOC": "malloc"}),
    Probe('pytest-memray `limit_memory("100 MB")`', "pytest-memray",
          pytest_argv("test_decorating_stays_under_peak"), read=read_pytest,
          pinned=memray_peak_bytes, headline=first_match(r"Test was limited .*"),
          timed="whole pytest process", env={"PYTHONMALLOC": "malloc"}),
    Probe("numpy `assert_no_gc_cycles`, called inside gc.disable()", "numpy",
          script_argv("probe_numpy.py", "--gc", "disabled"),
          pinned=object_count(r"(\d+) objects were collected"),
          headline=numpy_precondition_headline),
    Probe("numpy `assert_no_gc_cycles`, gc enabled for the call", "numpy",
          script_argv("probe_numpy.py", "--gc", "enabled"),
          pinned=object_count(r"(\d+) objects were collected"),
          headline=first_match(r"Reference cycles were found[^:]*: \d+ objects were collected")),
    Probe("refcycle `cycles_created_by`", "refcycle", script_argv("probe_refcycle.py"),
          pinned=object_count(r": (\d+) objects"),
          headline=first_match(r"ObjectGraph object of size \d+")),
    Probe("objgraph `show_growth` (the docs' leak recipe)", "objgraph",
          script_argv("probe_objgraph.py", "--recipe", "growth"),
          headline=first_match(r"\(no type grew\)", r"^\w+\s+\d+\s+\+\d+$")),
    Probe("objgraph `by_type('frame')` + `show_backrefs`", "objgraph",
          script_argv("probe_objgraph.py", "--recipe", "by-type"),
          headline=first_match(r"by_type\('frame'\): \d+ new frames")),
]


# ---------------------------------------------------------------------------------------------
# The throwaway venv.


def make_venv(base_python, cache_dir):
    """Returns (venv python, {package key: error text or ""}, {distribution: version})."""
    venv = os.path.join(cache_dir, VENV_NAME)
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([base_python, "-m", "venv", venv], check=True, capture_output=True)
    problems, versions = {}, {}
    for key, (distributions, modules) in TOOL_PACKAGES.items():
        imports = "; ".join(f"import {m}" for m in modules)
        if subprocess.run([python, "-c", imports], capture_output=True).returncode != 0:
            pip = subprocess.run([python, "-m", "pip", "install", "-q",
                                  "--disable-pip-version-check", *distributions],
                                 capture_output=True, text=True)
            if pip.returncode != 0:
                problems[key] = f"pip install {' '.join(distributions)} failed: " \
                                f"{last_line(pip.stderr)}"
                continue
        check = subprocess.run([python, "-c", imports], capture_output=True, text=True)
        problems[key] = f"{imports} failed: {last_line(check.stderr)}" if check.returncode else ""
        for name in distributions:
            versions[name] = installed_version(python, name)
    return python, problems, versions


def installed_version(python, distribution):
    query = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    done = subprocess.run([python, "-c", query], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "?"


# ---------------------------------------------------------------------------------------------
# Running and reading.


def run_probe(probe, python, model):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", LEAKGATE_COMPARE_MODEL=model, **probe.env)
    start = time.perf_counter()
    try:
        done = subprocess.run(probe.argv(python, model), cwd=HERE, env=env, capture_output=True,
                              text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return ProbeRun(-1, PROBE_TIMEOUT_S, "", "", error=f"timed out after {PROBE_TIMEOUT_S} s")
    run = ProbeRun(done.returncode, time.perf_counter() - start, done.stdout, done.stderr)
    try:
        (probe.read or read_result_protocol)(run)
    except (ValueError, KeyError) as error:  # a RESULT line that is not the protocol's JSON
        run.error = f"unreadable probe output: {error}"
    return run


def kernel_lines(model_path):
    """The lines of ModelDSL.kernel in the model: a report that gives file:line inside them points
    at the culprit without naming it."""
    tree = ast.parse(open(model_path, encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "ModelDSL":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "kernel":
                    return range(item.lineno, item.end_lineno + 1)
    return range(0)


def culprit_cell(report):
    if "ModelDSL.kernel" in report:
        return "yes: `ModelDSL.kernel`"
    # CPython's frame repr ("code kernel"), a traceback ("in kernel") or memray's "kernel:file:line"
    bare = re.search(r"code kernel\b|\bin kernel\b|\bkernel:\S+:\d+", report)
    if bare:
        return f"partly: `{bare.group(0)}` (code name, no class)"
    model = os.path.basename(workload.LEAKING_MODEL)
    inside = kernel_lines(workload.LEAKING_MODEL)
    for found in re.finditer(re.escape(model) + r"'?(?::|, line )(\d+)", report):
        if int(found.group(1)) in inside:
            return f"partly: `{model}:{found.group(1)}` (a line inside it, no name)"
    return "no"


def local_cell(report):
    if "cur_frame" not in report:
        return "no"
    label = re.search(r'label="([^"]*cur_frame[^"]*)"', report)
    return f"yes: `{label.group(1) if label else 'cur_frame'}`"


def spread(values):
    return f"{statistics.median(values):.3f} s ({min(values):.3f}–{max(values):.3f})"


def verdicts(runs):
    """(flagged by every run, flagged by none, text if the runs disagree)."""
    flags = [bool(run.result.get("flagged")) for run in runs]
    if all(flags):
        return True, None
    if not any(flags):
        return False, None
    return None, f"flaky: {sum(flags)}/{len(flags)} runs failed"


def error_row(tool, message, details=None):
    cells = {column: "–" for column in COLUMNS}
    cells.update({"tool": tool, "catches the cycle": f"error: {message}"})
    return Row(tool, cells, details=details or {})


def skipped_row(tool, reason):
    cells = {column: "–" for column in COLUMNS}
    cells.update({"tool": tool, "catches the cycle": f"skipped: {reason}"})
    return Row(tool, cells)


def measure(probe, python, runs_per_model):
    """Runs the probe on both models and turns the runs into a row; never raises for the tool."""
    runs = {model: [run_probe(probe, python, model) for _ in range(runs_per_model)]
            for model in ("leaking", "clean")}
    details = {model: [asdict(run) for run in model_runs] for model, model_runs in runs.items()}
    for model, model_runs in runs.items():
        failed = [run for run in model_runs if run.error]
        if failed:
            return error_row(probe.tool, f"{model} model: {failed[0].error}", details)
    leaking, clean = runs["leaking"][0], runs["clean"][0]
    headline = probe.headline or first_match()
    notes = []

    caught, flaky = verdicts(runs["leaking"])
    if flaky:
        catches = flaky
    elif caught and leaking.result.get("ran_workload", True):
        catches = f"yes: {headline(leaking.report)}"
    elif caught:
        catches = f"no: fails before running the code ({headline(leaking.report)})"
    elif leaking.result.get("alive_before_tool") and not leaking.result.get("alive_after"):
        catches = "no: its own gc.collect() freed the cycle before it looked"
    else:
        catches = f"no: {headline(leaking.report)}"

    alarmed, flaky = verdicts(runs["clean"])
    if flaky:
        clean_passes = flaky
    elif alarmed:
        clean_passes = f"no, false alarm: {headline(clean.report)}"
    else:
        clean_passes = "yes"

    if "pinned_bytes" in leaking.result:  # a probe that measures bytes itself (leakgate_dsl)
        pinned = describe_bytes(int(leaking.result["pinned_bytes"]))
    else:
        pinned = probe.pinned(leaking) if probe.pinned else "no"
    device = leaking.result.get("device_memory", "no")

    seconds = [run.result["seconds"] for run in runs["leaking"]]
    if leaking.result.get("gc_enabled_after"):
        notes.append("leaves the collector enabled after the check (the test had disabled it)")
    cells = {
        "tool": probe.tool,
        "catches the cycle": catches,
        "clean variant passes": clean_passes,
        "names culprit": culprit_cell(leaking.report),
        "names local": local_cell(leaking.report),
        "pinned bytes": pinned,
        "device memory": device,
        "time": f"{spread(seconds)}, {probe.timed}",
    }
    details["clean_seconds"] = [run.result["seconds"] for run in runs["clean"]]
    return Row(probe.tool, cells, notes, details)


def leakgate_dsl_row(python, runs_per_model, where):
    """The hook for leakgate's own Python package, import name ``leakgate_dsl``: a row with the
    same columns, skipped with the reason until the package imports in ``python`` (``where`` says
    which that is) and its probe, probe_leakgate_dsl.py, exists. That probe takes the model
    (leaking|clean|path) as its argument and prints workload.emit_result(report, flagged=...,
    seconds=..., ran_workload=True), with ``pinned_bytes`` (int) and ``device_memory`` (text)
    when it measures them."""
    tool = "leakgate_dsl (leakgate's Python package)"
    check = subprocess.run([python, "-c", "import leakgate_dsl"], capture_output=True, text=True)
    if check.returncode != 0:
        return skipped_row(tool, f"`import leakgate_dsl` fails in {where} "
                                 f"({last_line(check.stderr)})")
    if not os.path.exists(compare_path("probe_leakgate_dsl.py")):
        return skipped_row(tool, "leakgate_dsl imports, but bench/compare/probe_leakgate_dsl.py "
                                 "is not written yet")
    probe = Probe(tool, "", script_argv("probe_leakgate_dsl.py"),
                  headline=first_match(r"^frame-cycle: .*"))
    return measure(probe, python, runs_per_model)


def ground_truth_holds(python):
    """The task's premise, by the plain weakref check: the leaking model pins the payload under
    gc.disable() and the clean one does not."""
    reference = PROBES[0]
    leaking = run_probe(reference, python, "leaking")
    clean = run_probe(reference, python, "clean")
    return leaking.result.get("alive_after") is True and clean.result.get("alive_after") is False


# ---------------------------------------------------------------------------------------------
# Output.


def markdown(rows):
    def cell(text):
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.cells[c]) for c in COLUMNS) + " |")
    notes = [(row.tool, note) for row in rows for note in row.notes]
    if notes:
        lines.append("")
        lines += [f"- {tool}: {note}" for tool, note in notes]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=DEFAULT_PYTHON,
                        help="interpreter the venv is made from (default: %(default)s)")
    parser.add_argument("--cache-dir", help="keep the venv in DIR/compare-venv and reuse it "
                                            "(default: a temporary directory, removed at exit)")
    parser.add_argument("--runs", type=int, default=5, help="runs per tool and model")
    parser.add_argument("--json", metavar="FILE", help="also write the rows and raw runs as JSON")
    parser.add_argument("--leakgate-python", help="interpreter for the leakgate_dsl row "
                                                  "(default: the venv's)")
    args = parser.parse_args()
    if args.runs < 1 or not os.path.exists(args.python):
        parser.error("--runs must be at least 1 and --python must exist")

    temporary = None if args.cache_dir else tempfile.mkdtemp(prefix="leakgate-compare-")
    try:
        try:
            python, problems, versions = make_venv(args.python, args.cache_dir or temporary)
        except (OSError, subprocess.CalledProcessError) as error:
            print(f"compare_tools: cannot make the venv: {error}", file=sys.stderr)
            return 3
        if not ground_truth_holds(python):
            print("compare_tools: the task's premise does not hold (the leaking model's payload "
                  "must outlive its frame and the clean one's must not)", file=sys.stderr)
            return 3
        rows = []
        for probe in PROBES:
            print(f"compare_tools: {probe.tool} ...", file=sys.stderr, flush=True)
            if probe.package and problems.get(probe.package):
                rows.append(error_row(probe.tool, problems[probe.package]))
            else:
                rows.append(measure(probe, python, args.runs))
        rows.append(leakgate_dsl_row(args.leakgate_python or python, args.runs,
                                     args.leakgate_python or "the compare venv"))
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)

    python_version = subprocess.run([args.python, "-V"], capture_output=True, text=True).stdout
    environment = ", ".join([f"{len(os.sched_getaffinity(0))} cores", python_version.strip()]
                            + [f"{name} {version}" for name, version in sorted(versions.items())])
    print(markdown(rows))
    print(f"\n{args.runs} runs per tool and model; {environment}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"environment": environment, "runs": args.runs, "columns": COLUMNS,
                       "rows": [asdict(row) for row in rows]}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
