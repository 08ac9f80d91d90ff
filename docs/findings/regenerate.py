#!/usr/bin/env python3
"""Regenerates the command output in the write-ups of docs/findings, and checks it.

Each write-up marks a block of output with a comment, `<!-- run: ID -->`, followed by a fenced
block; this script runs that command in the release's venv and writes the block again from what
it printed: the command as a user types it, its output, and its exit status. Nothing in a block is
typed by hand. The only edits are mechanical and the same everywhere: the venv's path reads
`VENV`, its site-packages `.../site-packages`, and where a run keeps only some lines of its output
(`keep`), the lines cut are marked `...`.

    regenerate.py --leakgate BUILD/leakgate           rewrite every block
    regenerate.py --leakgate BUILD/leakgate --check   run the runs marked `test` and check their
                                                      exit status and what they print; write nothing
                                                      (tests/integration/test_findings.py)

The venvs are those `leakgate bisect` makes and caches (LEAKGATE_CACHE_DIR, default
~/.cache/leakgate/venvs/PACKAGE-VERSION-pyX.Y): a release not cached is installed by
`leakgate bisect --checks import`, as the `dsl` tests do. Runs on the CPython that leakgate embeds
(3.11 for these releases). Exit 0 when every run exited as expected, 1 otherwise, 77 (skip, the
reason on stdout) when a release could not be installed (PyPI not reachable).
"""

import argparse
import dataclasses
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

from dsl_release import Unavailable, gate_release  # noqa: E402


@dataclasses.dataclass
class Run:
    """One command of a write-up, run in the venv of `target` at `version`."""

    id: str  # the block's marker in the write-up; None for a run that is only checked
    target: str  # leakgate's built-in target, which names the package
    version: str
    argv: list  # LEAKGATE and PY stand for the binary and the venv's python; paths are from HERE
    shown: str  # the command as the write-up shows it
    status: int  # the exit status the run must have
    expect: str  # a regular expression its output must match
    keep: object = None  # None: every line; else a function from the lines to those shown
    test: bool = True  # run by --check (only venvs the dsl tests make anyway)


def scan_summary(lines):
    """The header, the failing checks, and the first finding up to its `fix:` line."""
    kept = [line for line in lines if line.startswith("leakgate ") or line.startswith("  FAIL")]
    first = next((i for i, line in enumerate(lines) if re.match(r"^[a-z-]+(:[a-z-]+)?: ", line)), None)
    if first is not None:
        end = next((i for i in range(first, len(lines)) if lines[i].startswith("  fix:")), len(lines) - 1)
        kept += [""] + lines[first:end + 1]
    last = lines[-1] if lines else ""
    return kept + (["...", last] if last not in kept else [])


def lint_findings_named(name):
    """Lint's header and the findings whose first line names `name`, each with its lines."""

    def keep(lines):
        kept = [line for line in lines if line.startswith("leakgate ") or line.startswith("  FAIL")]
        for i, line in enumerate(lines):
            if line.startswith("lint:") and name in line:
                kept.append(line)
                kept += [more for more in lines[i + 1:i + 3] if more.startswith("  ")]
        return kept + ["..."]

    return keep


WARP = "warp_1_19_0_failed_builds_traceback"
NUMBA = "numba_cuda_0_30_4_simulator_thread_exception"
CUTE = "cutlass_dsl_4_6_1_jit_wrapper_closure_cycle"
TAICHI = "taichi_1_7_4_launch_closure_cycle"

RUNS = {
    WARP: [
        Run("scan", "warp", "1.19.0",
            ["LEAKGATE", "scan", "--python", "PY", "--", "scans/warp_failed_build.py"],
            "leakgate scan --python VENV/bin/python -- scans/warp_failed_build.py", 1,
            r"FAIL  retained-frame .*frame of `step`.*failed_builds", scan_summary),
        Run("repro", "warp", "1.19.0", ["PY", "-W", "ignore", WARP + ".py"], "python " + WARP + ".py", 1,
            r"payload is alive; Module.failed_builds holds 1 exception"),
        # The last release before failed_builds kept the error (a set of keys there): not tested,
        # so that CI installs no release the dsl tests do not.
        Run("repro-1.16.0", "warp", "1.16.0", ["PY", "-W", "ignore", WARP + ".py"], "python " + WARP + ".py", 0,
            r"payload is freed", test=False),
    ],
    NUMBA: [
        Run("scan", "numba-cuda", "0.30.4",
            ["LEAKGATE", "scan", "--python", "PY", "--", "scans/numba_cuda_simulator_raise.py"],
            "leakgate scan --python VENV/bin/python -- scans/numba_cuda_simulator_raise.py", 1,
            r"FAIL  frame-cycle .*BlockThread\.run.*\.exception", scan_summary),
        Run("repro", "numba-cuda", "0.30.4", ["PY", NUMBA + ".py"], "python " + NUMBA + ".py", 1,
            r"payload is alive; .* 1 frame\(s\) of step\(\)"),
        Run("repro-0.4.0", "numba-cuda", "0.4.0", ["PY", NUMBA + ".py"], "python " + NUMBA + ".py", 1,
            r"payload is alive", test=False),
    ],
    CUTE: [
        Run("lint", "cute", "4.6.1",
            ["LEAKGATE", "lint", "--select", "closure-cycle", "SITE/cutlass/base_dsl/dsl.py"],
            "leakgate lint --select closure-cycle VENV/lib/python3.11/site-packages/nvidia_cutlass_dsl/"
            "dsl_packages/cutlass/base_dsl/dsl.py", 1,
            r"jit_runner_decorator\.<locals>\.jit_wrapper` refers to itself", lint_findings_named("jit_wrapper")),
        Run("lint-4.6.3", "cute", "4.6.3",
            ["LEAKGATE", "lint", "--select", "closure-cycle", "SITE/cutlass/base_dsl/dsl.py"],
            "leakgate lint --select closure-cycle VENV/lib/python3.11/site-packages/nvidia_cutlass_dsl/"
            "dsl_packages/cutlass/base_dsl/dsl.py", 0, r"no closure cycle"),
        Run("scan", "cute", "4.6.1",
            ["LEAKGATE", "scan", "--trace-sites", "--python", "PY", "--", "scans/cute_jit_per_config.py"],
            "leakgate scan --trace-sites --python VENV/bin/python -- scans/cute_jit_per_config.py", 1,
            r"FAIL  cyclic-garbage .*200 cycles of \[cell, dict, function, tuple\]", scan_summary,
            test=False),  # 21 s under tracemalloc; the lint run above checks the detection in 0.1 s
        Run("repro", "cute", "4.6.1", ["PY", CUTE + ".py"], "python " + CUTE + ".py", 1,
            r"100 payloads alive .* 100 `jit_wrapper`"),
        Run("repro-4.6.3", "cute", "4.6.3", ["PY", CUTE + ".py"], "python " + CUTE + ".py", 0,
            r"0 payloads alive .* 0 `jit_wrapper`"),
    ],
    # Its write-up's blocks were cut by hand before this script; its reproducer is checked here.
    TAICHI: [
        Run(None, "taichi", "1.7.4", ["PY", TAICHI + ".py"], "python " + TAICHI + ".py", 1,
            r"1000 launches left \d+ objects .* 1000 of them"),
    ],
}

PACKAGES = {"warp": "warp-lang", "numba-cuda": "numba-cuda", "cute": "nvidia-cutlass-dsl", "taichi": "taichi"}


def venv_python(leakgate, target, version, made):
    """The python of the release's venv, installed by `leakgate bisect` when not cached."""
    key = (target, version)
    if key not in made:
        cache = os.environ.get("LEAKGATE_CACHE_DIR") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "leakgate")
        venv = os.path.join(cache, "venvs", "%s-%s-py%d.%d" % (PACKAGES[target], version, *sys.version_info[:2]))
        if not os.path.exists(os.path.join(venv, ".leakgate-ready")):
            gate_release(leakgate, target, version, "import", package=PACKAGES[target])
        made[key] = os.path.join(venv, "bin", "python")
    return made[key]


def site_dir(python):
    """The release's own folder under site-packages: what its sources are linted from."""
    lib = os.path.join(os.path.dirname(os.path.dirname(python)), "lib")
    site = os.path.join(lib, os.listdir(lib)[0], "site-packages")
    nested = os.path.join(site, "nvidia_cutlass_dsl", "dsl_packages")
    return nested if os.path.isdir(nested) else site


def execute(leakgate, run, python):
    """(status, the output lines as the write-up shows them, the raw output)."""
    argv = [leakgate if a == "LEAKGATE" else python if a == "PY" else a.replace("SITE", site_dir(python))
            for a in run.argv]
    proc = subprocess.run(argv, cwd=HERE, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1"))
    venv = os.path.dirname(os.path.dirname(python))
    text = proc.stdout.replace(venv, "VENV")
    text = re.sub(r"VENV/lib/python3\.\d+/site-packages", ".../site-packages", text)
    with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8") as cfg:
        home = next(line.split("=", 1)[1].strip() for line in cfg if line.startswith("home"))
    text = text.replace(os.path.dirname(home) + "/", "CPYTHON/")  # the venv's base interpreter
    lines = text.rstrip("\n").split("\n")
    shown = run.keep(lines) if run.keep else lines
    return proc.returncode, shown, proc.stdout + proc.stderr


def block(run, status, lines):
    body = "\n".join(["$ " + run.shown] + lines + ["$ echo $?", str(status)])
    return body


def rewrite(doc, blocks):
    """The write-up with each marked block replaced; a marker without a run is an error."""
    with open(doc, encoding="utf-8") as handle:
        text = handle.read()

    def replace(match):
        marker = match.group(1)
        if marker not in blocks:
            raise SystemExit(f"{doc}: no run for marker {marker!r}")
        return f"<!-- run: {marker} -->\n```\n{blocks[marker]}\n```"

    updated = re.sub(r"<!-- run: ([\w.-]+) -->\n```\n.*?\n```", replace, text, flags=re.S)
    with open(doc, "w", encoding="utf-8") as handle:
        handle.write(updated)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--leakgate", required=True)
    parser.add_argument("--check", action="store_true", help="run the tested runs and check them; write nothing")
    parser.add_argument("names", nargs="*", help="write-ups by name (default: all)")
    args = parser.parse_args()
    leakgate = os.path.abspath(args.leakgate)
    made = {}
    failures = 0
    for name, runs in RUNS.items():
        if args.names and name not in args.names:
            continue
        blocks = {}
        for run in runs:
            if args.check and not run.test:
                continue
            try:
                python = venv_python(leakgate, run.target, run.version, made)
            except Unavailable as unavailable:
                print(unavailable.message)
                return unavailable.exit_code
            started = time.monotonic()
            status, lines, raw = execute(leakgate, run, python)
            ok = status == run.status and re.search(run.expect, raw) is not None
            print(f"{'ok  ' if ok else 'FAIL'} {name} {run.id or 'repro'} on {run.target} {run.version}: "
                  f"exit {status} (expected {run.status}), {time.monotonic() - started:.1f} s")
            if not ok:
                failures += 1
                print(f"  the output does not match {run.expect!r} or the exit status differs:\n{raw[-4000:]}")
            if run.id:
                blocks[run.id] = block(run, status, lines)
        if not args.check and blocks:
            rewrite(os.path.join(HERE, name + ".md"), blocks)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
