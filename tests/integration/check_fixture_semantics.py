#!/usr/bin/env python3
"""Check the scan fixtures' expectations against plain CPython, without leakgate.

Each fixture runs in a fresh worker process of the chosen Python, the way
``leakgate scan`` runs it: gc disabled, earlier garbage collected and
discarded, the code compiled and executed as ``__main__``, non-daemon threads
joined, then

  (a) one ``gc.collect()`` with ``gc.DEBUG_SAVEALL``; the frames in
      ``gc.garbage`` are grouped by strongly connected component, and each
      frame whose own locals point back into its component is a culprit
      (a simulated ``frame-cycle`` finding: culprit first, then its ``f_back``
      chain inside the garbage);
  (b) ``gc.garbage`` cleared, a real collection, then every frame still alive
      that is neither executing (on a thread's stack) nor suspended (owned by
      a live generator, coroutine or async generator) is retained (a
      simulated ``retained-frame`` finding for each one held by something
      other than another retained frame's ``f_back``).

Errors are simulated too: an exception other than SystemExit, death by a
signal, running past the fixture's ``--timeout`` and a script that left gc
enabled.  The simulated report is then checked with the very matching code of
run_fixture.py, so this validates the fixtures themselves.

One difference from leakgate: the worker runs the code with ``exec()``, so the
worker's own (executing) frame sits under the script's ``<module>`` frame; the
``f_back`` chains here stop at the first frame that is not garbage (or not
retained).

Usage:
    check_fixture_semantics.py [--python PY ...] [-v] [FIXTURE ...]

Without FIXTURE, every fixtures/scan/*.py is checked; without --python, each
of the pyenv Pythons 3.10 to 3.13 that exists.  Exit status 0 if every
fixture behaves as it expects on every Python, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gc
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURE_DIR = os.path.join(REPO, "fixtures", "scan")
DEFAULT_PYTHONS = [
    f"/root/.pyenv/versions/{v}/bin/python3" for v in ("3.10.13", "3.11.7", "3.12.1", "3.13.0")
]
GENERATOR_TYPES = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


# ---------------------------------------------------------------------------
# Worker side: runs inside the Python under test (3.10+), writes a JSON report.


def _qualname(code):
    return getattr(code, "co_qualname", code.co_name)


def _frame_record(frame):
    return {
        "function": _qualname(frame.f_code),
        "file": frame.f_code.co_filename,
        "line": frame.f_lineno,
    }


def _strongly_connected(objects):
    """Tarjan's algorithm over objects, edges by gc.get_referents; iterative."""
    index_of = {id(o): i for i, o in enumerate(objects)}
    edges = [
        [index_of[id(r)] for r in gc.get_referents(o) if id(r) in index_of] for o in objects
    ]
    counter = 0
    order = [-1] * len(objects)
    low = [0] * len(objects)
    on_stack = [False] * len(objects)
    stack, components = [], []
    for root in range(len(objects)):
        if order[root] != -1:
            continue
        work = [(root, 0)]
        while work:
            node, edge_pos = work.pop()
            if edge_pos == 0:
                order[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack[node] = True
            recurse = False
            for pos in range(edge_pos, len(edges[node])):
                nxt = edges[node][pos]
                if order[nxt] == -1:
                    work.append((node, pos + 1))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if on_stack[nxt]:
                    low[node] = min(low[node], order[nxt])
            if recurse:
                continue
            if low[node] == order[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return components, edges


def _exclusive_untracked_sizes(garbage):
    """sys.getsizeof of each untracked object held only by garbage, by garbage index.

    A bytearray, bytes or str is not gc-tracked, so it never shows in
    gc.garbage even when the garbage is all that keeps it alive: count it by
    comparing its reference count with the references garbage objects hold.
    """
    garbage_ids = {id(o) for o in garbage}
    held, edge_count, holders = {}, {}, {}
    for index, obj in enumerate(garbage):
        for ref in gc.get_referents(obj):
            if gc.is_tracked(ref) or id(ref) in garbage_ids:
                continue
            held[id(ref)] = ref
            edge_count[id(ref)] = edge_count.get(id(ref), 0) + 1
            holders.setdefault(id(ref), set()).add(index)
        ref = None
    sizes = {}
    for key in list(held):
        obj = held[key]
        # References besides the garbage's: held[key], obj, getrefcount's argument.
        if sys.getrefcount(obj) - 3 == edge_count[key]:
            sizes[key] = (sys.getsizeof(obj), holders[key])
        obj = None
    return sizes


def _analyse_garbage(garbage):
    frame_type = types.FrameType
    components, edges = _strongly_connected(garbage)
    garbage_ids = {id(o) for o in garbage}
    untracked = _exclusive_untracked_sizes(garbage)
    untracked_by_holder = {}
    for size, holders in untracked.values():
        for index in holders:
            untracked_by_holder.setdefault(index, []).append(size)
    findings, frames_seen = [], []
    # Only now read f_locals: on 3.10-3.12 it materialises a dict on the frame.
    for component in components:
        cyclic = len(component) > 1 or component[0] in edges[component[0]]
        frames = [garbage[i] for i in component if isinstance(garbage[i], frame_type)]
        if not frames:
            continue
        frames_seen.extend(_frame_record(f)["function"] for f in frames)
        if not cyclic:
            continue
        member_ids = {id(garbage[i]) for i in component}
        culprits = []
        for frame in frames:
            names = sorted(
                name for name, value in frame.f_locals.items() if id(value) in member_ids
            )
            culprits.append((frame, names))
        named = [c for c in culprits if c[1]] or culprits
        # Everything the component keeps alive: the garbage reachable from it,
        # plus untracked objects (buffers, strings) held only by that garbage.
        reach, todo = set(component), list(component)
        while todo:
            for nxt in edges[todo.pop()]:
                if nxt not in reach:
                    reach.add(nxt)
                    todo.append(nxt)
        size = sum(sys.getsizeof(garbage[i]) for i in reach)
        size += sum(
            s for s, holders in untracked.values() if holders & reach
        )
        for frame, names in named:
            chain, back = [_frame_record(frame)], frame.f_back
            while back is not None and id(back) in garbage_ids:
                chain.append(_frame_record(back))
                back = back.f_back
            findings.append(
                {
                    "kind": "frame-cycle",
                    "summary": f"{chain[0]['function']} in a cycle of {len(component)} objects, "
                    f"keeps {len(reach)} objects / {size} bytes alive, "
                    f"pins {len(chain) - 1} frame(s)",
                    "frames": chain,
                    "locals": names,
                    "objects": len(reach),
                    "bytes": size,
                }
            )
    total_untracked = sum(size for size, _ in untracked.values())
    return findings, frames_seen, total_untracked


def _live_frames():
    """Every frame object reachable in one step from a gc-tracked object.

    Frame objects of executing code are not gc-tracked on 3.11+, so also look
    at what tracked objects refer to.
    """
    frame_type = types.FrameType
    found = {}
    for obj in gc.get_objects():
        if isinstance(obj, frame_type):
            found[id(obj)] = obj
        for ref in gc.get_referents(obj):
            if isinstance(ref, frame_type):
                found[id(ref)] = ref
    return list(found.values())


def _analyse_retained(own_frame):
    executing = set()
    for top in sys._current_frames().values():
        frame = top
        while frame is not None:
            executing.add(id(frame))
            frame = frame.f_back
    suspended = set()
    for obj in gc.get_objects():
        if isinstance(obj, GENERATOR_TYPES):
            frame = getattr(obj, "gi_frame", None) or getattr(obj, "cr_frame", None)
            frame = frame or getattr(obj, "ag_frame", None)
            if frame is not None:
                suspended.add(id(frame))
    candidates = _live_frames()
    retained = [
        f for f in candidates if id(f) not in executing and id(f) not in suspended and f is not own_frame
    ]
    retained_ids = {id(f) for f in retained}
    bookkeeping = {id(candidates), id(retained)}
    findings = []
    for frame in retained:
        holders = [
            r
            for r in gc.get_referrers(frame)
            if id(r) not in bookkeeping and id(r) not in retained_ids
        ]
        if not holders:
            continue  # only pinned through another retained frame's f_back
        chain, back = [_frame_record(frame)], frame.f_back
        while back is not None and id(back) in retained_ids:
            chain.append(_frame_record(back))
            back = back.f_back
        findings.append(
            {
                "kind": "retained-frame",
                "summary": f"{chain[0]['function']} retained by "
                + ", ".join(sorted({type(h).__name__ for h in holders})),
                "frames": chain,
                "locals": [],
                "objects": None,
                "bytes": None,
            }
        )
    names = [_qualname(f.f_code) for f in retained]
    del candidates, retained
    return findings, names


def run_worker(script, args, report_path):
    gc.disable()
    gc.collect()
    gc.garbage.clear()

    script = os.path.abspath(script)
    with open(script, "rb") as handle:
        code = compile(handle.read(), script, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__file__ = script
    module.__builtins__ = __builtins__
    sys.modules["__main__"] = module
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(script)

    status, message, exit_status = "ok", None, None
    try:
        exec(code, module.__dict__)
    except SystemExit as stop:
        exit_status = stop.code if isinstance(stop.code, (int, type(None))) else str(stop.code)
    except BaseException as failure:  # noqa: BLE001 - the script's error is the result
        status = "error"
        message = "script raised " + "".join(
            traceback.format_exception_only(type(failure), failure)
        ).strip()
        traceback.print_exc()
    sys.stdout.flush()

    main_thread = threading.main_thread()
    while True:
        pending = [
            t
            for t in threading.enumerate()
            if t is not main_thread and not t.daemon and t.is_alive()
        ]
        if not pending:
            break
        for thread in pending:
            thread.join()

    if gc.isenabled():
        status, message = "error", "the script called gc.enable(); the audit needs gc disabled"
        gc.disable()

    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    gc.set_debug(0)
    garbage = list(gc.garbage)
    gc.garbage.clear()
    garbage_bytes = sum(sys.getsizeof(o) for o in garbage)
    cycle_findings, garbage_frames, untracked_bytes = _analyse_garbage(garbage)
    garbage_count = len(garbage)
    del garbage
    gc.collect()
    gc.garbage.clear()
    gc.collect()

    retained_findings, retained_frames = _analyse_retained(sys._getframe())
    report = {
        "python": sys.version.split()[0],
        "status": status,
        "message": message,
        "exit_status": exit_status,
        "garbage_objects": garbage_count,
        "garbage_bytes": garbage_bytes,
        "garbage_untracked_bytes": untracked_bytes,
        "garbage_frames": garbage_frames,
        "retained_frames": retained_frames,
        "findings": cycle_findings + retained_findings,
    }
    with open(report_path, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
    sys.stdout.flush()
    sys.stderr.flush()
    # Daemon threads may still run; do not wait for them or run atexit hooks.
    os._exit(0)


# ---------------------------------------------------------------------------
# Parent side.


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


_SIGNAL_WORDS = {signal.SIGSEGV: "Segmentation fault", signal.SIGABRT: "Aborted"}


def simulate(python, fixture, spec, timeout):
    """Runs one fixture in a worker; returns (exit code, leakgate-like report, worker report)."""
    with tempfile.TemporaryDirectory(prefix="leakgate-semantics-") as tmp:
        report_path = os.path.join(tmp, "worker.json")
        command = [python, os.path.abspath(__file__), "--worker", fixture, "--report", report_path]
        command += ["--", *spec_script_args(spec)]
        result = {"workload": "scan", "status": "ok", "error": None}
        worker = None
        try:
            proc = subprocess.run(
                command, capture_output=True, text=True, errors="replace", timeout=timeout,
                stdin=subprocess.DEVNULL, cwd=tmp,
            )
        except subprocess.TimeoutExpired as err:
            stderr = err.stderr.decode(errors="replace") if err.stderr else ""
            result.update(status="error", error={
                "message": f"timed out after {timeout:g} s", "signal": None,
                "stderr_tail": stderr[-2000:],
            })
        else:
            if proc.returncode < 0:
                number = -proc.returncode
                words = _SIGNAL_WORDS.get(number, _signal_name(number))
                result.update(status="error", error={
                    "message": f"worker killed by signal {number} ({words})", "signal": number,
                    "stderr_tail": proc.stderr[-2000:],
                })
            elif not os.path.exists(report_path):
                result.update(status="error", error={
                    "message": f"worker exited {proc.returncode} without a report", "signal": None,
                    "stderr_tail": proc.stderr[-2000:],
                })
            else:
                with open(report_path, encoding="utf-8") as handle:
                    worker = json.load(handle)
                if worker["status"] == "error":
                    result.update(status="error", error={
                        "message": worker["message"], "signal": None,
                        "stderr_tail": proc.stderr[-2000:],
                    })
    findings = worker["findings"] if worker else []
    if findings:
        code = 1
    elif result["status"] == "error":
        code = 3
    else:
        code = 0
    report = {"schema": "leakgate/1", "command": "scan", "exit_code": code,
              "results": [result], "checks": [], "findings": findings}
    return code, report, worker


def spec_script_args(spec):
    """Leakgate options are not the script's arguments: a fixture gets none."""
    return []


def leakgate_timeout(spec, default):
    args = spec.args
    for i, arg in enumerate(args):
        if arg == "--timeout" and i + 1 < len(args):
            return float(args[i + 1])
        if arg.startswith("--timeout="):
            return float(arg.split("=", 1)[1])
    return default


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        script, report_path = argv[1], argv[3]
        rest = argv[argv.index("--") + 1:] if "--" in argv else []
        run_worker(script, rest, report_path)
        return 0

    sys.path.insert(0, HERE)
    import run_fixture  # the same parser and matcher as the real runner

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", help="Python to test (repeatable)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="worker time limit when the fixture sets none (s)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every finding")
    parser.add_argument("fixtures", nargs="*")
    opts = parser.parse_args(argv)

    pythons = opts.python or [p for p in DEFAULT_PYTHONS if os.path.exists(p)]
    fixtures = [os.path.abspath(f) for f in opts.fixtures] or sorted(
        glob.glob(os.path.join(FIXTURE_DIR, "*.py"))
    )
    all_ok = True
    for python in pythons:
        version = subprocess.run(
            [python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        print(f"== Python {version} ({python})")
        for fixture in fixtures:
            name = os.path.basename(fixture)
            spec = run_fixture.parse_fixture(fixture).for_python(
                tuple(int(x) for x in version.split(".")[:2]))
            if not spec.expectations:
                print(f"FAIL {name}: no '# expect:' line")
                all_ok = False
                continue
            timeout = leakgate_timeout(spec, opts.timeout)
            code, report, worker = simulate(python, fixture, spec, timeout)
            co_name_only = tuple(int(x) for x in version.split(".")[:2]) < (3, 11)
            verdicts = run_fixture.check_expectations(spec, code, report, co_name_only)
            ok = all(v.ok for v in verdicts)
            all_ok &= ok
            garbage = (
                f"garbage {worker['garbage_objects']} objects / {worker['garbage_bytes']} bytes "
                f"(+{worker['garbage_untracked_bytes']} untracked), "
                f"{len(worker['garbage_frames'])} frame(s); "
                f"retained {len(worker['retained_frames'])} frame(s)"
                if worker else report["results"][0]["error"]["message"]
            )
            print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {code}; {garbage}")
            if not ok or opts.verbose:
                for v in verdicts:
                    print(f"       {'ok  ' if v.ok else 'FAIL'} {v.expectation.describe()} -> {v.detail}")
                if worker:
                    print(f"       garbage frames: {worker['garbage_frames']}")
                    print(f"       retained frames: {worker['retained_frames']}")
                print("\n".join("     " + line for line in run_fixture.describe_report(report)))
    print("all fixtures behave as they expect" if all_ok else "SOME FIXTURES DO NOT BEHAVE AS EXPECTED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
