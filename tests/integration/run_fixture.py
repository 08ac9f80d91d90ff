#!/usr/bin/env python3
"""Run one leakgate scan fixture and check the expectations written inside it.

Usage:
    run_fixture.py --leakgate BUILD/leakgate [--python-version X.Y] FIXTURE.py

The fixture declares what leakgate must report in comment lines (see
README.md beside this file):

    # args: --timeout 3
    # expect: exit 1
    # expect: finding frame-cycle function=DSL.kernel local=cur_frame pins=build_model
    # expect: finding frame-cycle function=DSL.jit min-bytes=16777216
    # expect: finding frame-cycle function=supervise pins-held=run_job:tb_frame
    # expect: finding retained-frame function=install_handlers stored-by=handler
    # expect: finding frame-cycle function=load_records bound-at=36
    # expect: no-finding retained-frame
    # expect: error timed out
    # expect: other-cycle Job method    (a cycle shape no frame closes with all these types among its own)
    # expect: other-cycle Job bytes>=N  (... that pins at least N bytes in all)
    # expect: other-cycle Job first     (... listed first: the shape that pins the most bytes)
    # expect (python >= 3.12): exit 1

An expectation may hold on some Pythons only: ``# expect (python >= X.Y):`` or
``# expect (python < X.Y):``, compared with the Python leakgate embeds.

The runner calls ``leakgate scan --json TMP ARGS -- FIXTURE``, reads the JSON
report (schema leakgate/1), checks every expectation, and prints what was
expected next to what was found.

Exit status: 0 all expectations hold, 1 a mismatch (or a fixture without
expectations, or no usable report), 77 skipped (the leakgate binary does not
exist; CTest's SKIP_RETURN_CODE).

Standard library only; Python 3.10+.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

SKIP = 77
SCHEMA = "leakgate/1"
FINDING_KEYS = ("function", "local", "pins", "pins-held", "stored-by", "bound-at", "fix-in", "min-bytes",
                "holder", "fix-names")

_DIRECTIVE = re.compile(
    r"^\s*#\s*(expect|args)(?:\s*\(\s*python\s*(>=|<)\s*(\d+)\.(\d+)\s*\))?\s*:\s*(.*?)\s*$"
)


class FixtureFormatError(Exception):
    """A fixture's expectation lines cannot be understood."""


@dataclasses.dataclass
class Expectation:
    """One ``# expect:`` line.

    verb is ``exit``, ``finding``, ``no-finding`` or ``error``; for findings,
    props holds (key, value) pairs, a key possibly repeated (every pair must
    hold for one and the same finding).
    """

    verb: str
    line: int
    text: str
    code: int | None = None
    kind: str | None = None
    props: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    substring: str | None = None
    python: tuple[str, tuple[int, int]] | None = None  # (">=" or "<", (X, Y)): where it holds

    def describe(self) -> str:
        return self.text

    def holds_on(self, version: tuple[int, int]) -> bool:
        if self.python is None:
            return True
        op, bound = self.python
        return version >= bound if op == ">=" else version < bound


@dataclasses.dataclass
class FixtureSpec:
    path: str
    args: list[str]
    expectations: list[Expectation]

    @property
    def exit_code(self) -> int | None:
        for exp in self.expectations:
            if exp.verb == "exit":
                return exp.code
        return None

    @property
    def conditional(self) -> bool:
        return any(exp.python is not None for exp in self.expectations)

    def for_python(self, version: tuple[int, int]) -> "FixtureSpec":
        """The expectations that hold on this Python (at most one exit line among them)."""
        kept = [exp for exp in self.expectations if exp.holds_on(version)]
        if sum(exp.verb == "exit" for exp in kept) > 1:
            raise FixtureFormatError(
                f"{self.path}: more than one '# expect: exit' line holds on Python {version[0]}.{version[1]}"
            )
        return dataclasses.replace(self, expectations=kept)


def parse_fixture(path: str) -> FixtureSpec:
    """Reads the ``# expect:`` and ``# args:`` comment lines of a fixture."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    args: list[str] = []
    expectations: list[Expectation] = []
    for number, raw in enumerate(lines, start=1):
        match = _DIRECTIVE.match(raw)
        if not match:
            continue
        directive, op, major, minor, rest = match.groups()
        where = f"{path}:{number}"
        if op and directive != "expect":
            raise FixtureFormatError(f"{where}: only '# expect' lines take a (python ...) condition")
        if directive == "args":
            try:
                args.extend(shlex.split(rest))
            except ValueError as err:
                raise FixtureFormatError(f"{where}: bad '# args:' line: {err}") from None
            continue
        expectation = _parse_expectation(rest, number, where)
        if op:
            expectation.python = (op, (int(major), int(minor)))
        expectations.append(expectation)
    exits = [e for e in expectations if e.verb == "exit" and e.python is None]
    if len(exits) > 1:
        raise FixtureFormatError(f"{path}: more than one '# expect: exit' line")
    return FixtureSpec(path=path, args=args, expectations=expectations)


def _parse_expectation(text: str, number: int, where: str) -> Expectation:
    verb, _, rest = text.partition(" ")
    rest = rest.strip()
    if verb == "exit":
        if not re.fullmatch(r"\d+", rest):
            raise FixtureFormatError(f"{where}: '# expect: exit N' needs one integer, got {rest!r}")
        return Expectation("exit", number, text, code=int(rest))
    if verb in ("finding", "no-finding"):
        words = rest.split()
        if not words:
            raise FixtureFormatError(f"{where}: '# expect: {verb}' needs a KIND")
        kind, props = words[0], []
        if "=" in kind:
            raise FixtureFormatError(f"{where}: KIND must come first, got {kind!r}")
        for word in words[1:]:
            key, sep, value = word.partition("=")
            if verb == "no-finding":
                raise FixtureFormatError(f"{where}: 'no-finding' takes only a KIND, got {word!r}")
            if key == "min-bytes" and not re.fullmatch(r"\d+", value):
                raise FixtureFormatError(f"{where}: min-bytes needs an integer, got {value!r}")
            if not sep or key not in FINDING_KEYS or not value:
                raise FixtureFormatError(
                    f"{where}: bad finding property {word!r} (known: "
                    + ", ".join(f"{k}=VALUE" for k in FINDING_KEYS)
                    + ")"
                )
            props.append((key, value))
        return Expectation(verb, number, text, kind=kind, props=props)
    if verb in ("error", "other-cycle", "note", "check-says"):
        if not rest:
            raise FixtureFormatError(f"{where}: '# expect: {verb}' needs a SUBSTRING")
        return Expectation(verb, number, text, substring=rest)
    raise FixtureFormatError(
        f"{where}: unknown expectation {verb!r} (known: exit, finding, no-finding, error, other-cycle, note, "
        "check-says)"
    )


# ---------------------------------------------------------------------------
# Matching against the report


def _version_tuple(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    match = re.match(r"^\s*(\d+)\.(\d+)", str(text))
    return (int(match.group(1)), int(match.group(2))) if match else None


def report_python_version(report: dict) -> tuple[int, int] | None:
    """The embedded Python's version if the report says it (optional field)."""
    for key in ("python", "python_version"):
        value = report.get(key)
        if isinstance(value, dict):
            value = value.get("version")
        version = _version_tuple(value) if isinstance(value, str) else None
        if version:
            return version
    return None


def function_matches(expected: str, found: str | None, co_name_only: bool) -> bool:
    """Qualname comparison; on 3.10 leakgate can only report ``co_name``."""
    if found is None:
        return False
    if found == expected:
        return True
    if co_name_only:
        return found == expected.rsplit(".", 1)[-1]
    return False


def _frames(finding: dict) -> list[dict]:
    frames = finding.get("frames")
    return [f for f in frames if isinstance(f, dict)] if isinstance(frames, list) else []


def _culprit(finding: dict) -> str | None:
    frames = _frames(finding)
    return frames[0].get("function") if frames else None


def finding_satisfies(finding: dict, exp: Expectation, co_name_only: bool) -> list[str]:
    """The properties of exp that finding does not have (empty: it matches)."""
    missing = []
    if finding.get("kind") != exp.kind:
        return [f"kind={exp.kind}"]
    locals_ = finding.get("locals") if isinstance(finding.get("locals"), list) else []
    functions = [f.get("function") for f in _frames(finding)]
    for key, value in exp.props:
        if key == "function":
            ok = function_matches(value, _culprit(finding), co_name_only)
        elif key == "local":
            ok = value in locals_
        elif key == "min-bytes":
            size = finding.get("bytes")
            ok = isinstance(size, int) and not isinstance(size, bool) and size >= int(value)
        elif key == "bound-at":  # the line whose statement binds the closing local (the fix site)
            site = finding.get("fix_site") if isinstance(finding.get("fix_site"), dict) else {}
            ok = str(site.get("line")) == value
        elif key == "fix-in":  # the function of the fix site (a closure cell's: the enclosing one)
            site = finding.get("fix_site") if isinstance(finding.get("fix_site"), dict) else {}
            ok = function_matches(value, site.get("function"), co_name_only)
        elif key == "fix-names":  # the fix names this, in backquotes (a function, a local)
            ok = f"`{value}`" in str(finding.get("fix", ""))
        elif key == "holder":  # held-growth: the container that grew, as the finding names it
            ok = finding.get("root") == value
        elif key == "stored-by":  # the function whose statement stores the frame on an attribute
            ok = f"stored by `{value}`" in str(finding.get("summary", ""))
        elif key == "pins-held":  # FUNCTION:EDGE, a pinned frame held by that edge first
            function, _, edge = value.partition(":")
            ok = any(function_matches(function, f.get("function"), co_name_only)
                     and str(f.get("held_by", "")).split(" ")[0] == edge for f in _frames(finding))
        else:  # pins
            ok = any(function_matches(value, fn, co_name_only) for fn in functions)
        if not ok:
            missing.append(f"{key}={value}")
    return missing


def _error_texts(result: dict) -> list[str]:
    error = result.get("error")
    if not isinstance(error, dict):
        return []
    return [str(error.get(k)) for k in ("message", "stderr_tail") if error.get(k) is not None]


@dataclasses.dataclass
class Verdict:
    expectation: Expectation
    ok: bool
    detail: str


def check_expectations(
    spec: FixtureSpec, exit_code: int, report: dict, co_name_only: bool
) -> list[Verdict]:
    findings = [f for f in report.get("findings", []) if isinstance(f, dict)]
    results = [r for r in report.get("results", []) if isinstance(r, dict)]
    verdicts = []
    for exp in spec.expectations:
        if exp.verb == "exit":
            ok = exit_code == exp.code
            verdicts.append(Verdict(exp, ok, f"exit {exit_code}"))
        elif exp.verb == "finding":
            same_kind = [f for f in findings if f.get("kind") == exp.kind]
            best = None
            for finding in same_kind:
                missing = finding_satisfies(finding, exp, co_name_only)
                if not missing:
                    verdicts.append(Verdict(exp, True, f"matched: {_one_line(finding)}"))
                    break
                if best is None or len(missing) < len(best[1]):
                    best = (finding, missing)
            else:
                if not same_kind:
                    detail = f"no finding of kind {exp.kind}"
                else:
                    detail = (
                        f"{len(same_kind)} finding(s) of kind {exp.kind}, none with all properties; "
                        f"closest lacks {' '.join(best[1])}: {_one_line(best[0])}"
                    )
                verdicts.append(Verdict(exp, False, detail))
        elif exp.verb == "no-finding":
            same_kind = [f for f in findings if f.get("kind") == exp.kind]
            detail = (
                "none" if not same_kind else "found: " + "; ".join(_one_line(f) for f in same_kind)
            )
            verdicts.append(Verdict(exp, not same_kind, detail))
        elif exp.verb == "other-cycle":
            shapes = [shape for r in results
                      for shape in ((r.get("details") or {}).get("other_cycles") or {}).get("largest", [])]
            words = exp.substring.split()
            least = next((int(w.split("=", 1)[1]) for w in words if w.startswith("bytes>=")), 0)
            first_only = "first" in words
            wanted = {w for w in words if not w.startswith("bytes>=") and w != "first"}
            hit = any(wanted <= set(str(shape.get("types", "")).split(", ")) and
                      int(shape.get("bytes") or 0) >= least
                      for shape in (shapes[:1] if first_only else shapes))
            detail = ("found" if hit else
                      "other cycle shapes: " + ("; ".join(f"{shape.get('types')} ({shape.get('bytes')} bytes)"
                                                          for shape in shapes) or "none"))
            verdicts.append(Verdict(exp, hit, detail))
        elif exp.verb == "note":  # a result's note holds the text
            notes = [note for r in results for note in (r.get("notes") or [])]
            hit = any(exp.substring in note for note in notes)
            verdicts.append(Verdict(exp, hit, "found" if hit else "notes: " + ("; ".join(notes) or "none")))
        elif exp.verb == "check-says":  # CHECK TEXT: that check's line holds the text
            name, _, text = exp.substring.partition(" ")
            says = [str(c.get("reason") or "") for r in results
                    for c in (r.get("checks") or []) if c.get("name") == name]
            hit = any(text in line for line in says)
            verdicts.append(Verdict(exp, hit, "found" if hit else f"{name} says: " + ("; ".join(says) or "nothing")))
        else:  # error
            errored = [r for r in results if r.get("status") == "error"]
            hit = any(exp.substring in text for r in errored for text in _error_texts(r))
            if hit:
                detail = "found in an error result"
            elif not errored:
                detail = "no result has status error"
            else:
                detail = "substring not in any error message or stderr_tail"
            verdicts.append(Verdict(exp, hit, detail))
    return verdicts


def _one_line(finding: dict) -> str:
    culprit = _culprit(finding) or "?"
    locals_ = ",".join(str(x) for x in finding.get("locals") or []) or "-"
    summary = finding.get("summary") or ""
    return (
        f"[{finding.get('kind')}] {culprit} locals={locals_} bytes={finding.get('bytes')}"
        f" :: {summary}"
    )


# ---------------------------------------------------------------------------
# Reporting


def _tail(text: str, limit: int = 4000) -> str:
    text = text or ""
    return text if len(text) <= limit else "...\n" + text[-limit:]


def describe_report(report: dict) -> list[str]:
    out = []
    for result in report.get("results", []):
        if not isinstance(result, dict):
            continue
        line = f"  result {result.get('workload')}: {result.get('status')}"
        error = result.get("error")
        if isinstance(error, dict):
            line += f" -- {error.get('message')}"
            if error.get("signal") is not None:
                line += f" (signal {error.get('signal')})"
        out.append(line)
        if isinstance(error, dict) and error.get("stderr_tail"):
            tail_lines = str(error["stderr_tail"]).splitlines()[-15:]
            out.extend("      | " + text for text in tail_lines)
    for check in report.get("checks", []):
        if isinstance(check, dict):
            reason = f" ({check.get('reason')})" if check.get("reason") else ""
            out.append(f"  check {check.get('name')}: {check.get('status')}{reason}")
    findings = [f for f in report.get("findings", []) if isinstance(f, dict)]
    out.append(f"  findings: {len(findings)}")
    for index, finding in enumerate(findings, start=1):
        out.append(f"  #{index} {finding.get('kind')}: {finding.get('summary')}")
        chain = " <- ".join(
            f"{f.get('function')} ({os.path.basename(str(f.get('file')))}:{f.get('line')})"
            for f in _frames(finding)
        )
        out.append(f"      frames: {chain or '-'}")
        out.append(
            f"      locals: {finding.get('locals')}  objects: {finding.get('objects')}"
            f"  bytes: {finding.get('bytes')}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leakgate", required=True, help="path to the leakgate binary")
    parser.add_argument(
        "--python-version",
        default=os.environ.get("LEAKGATE_PYTHON_VERSION"),
        help="X.Y of the Python leakgate embeds; on 3.10, function= and pins= compare "
        "co_name only (the report may also say it in a 'python' field)",
    )
    parser.add_argument(
        "--run-timeout",
        type=float,
        default=300.0,
        help="seconds before the runner gives up on leakgate itself (default 300)",
    )
    parser.add_argument("fixture")
    opts = parser.parse_args(argv)

    fixture = os.path.abspath(opts.fixture)
    name = os.path.relpath(fixture)
    if name.startswith(".."):
        name = fixture
    try:
        spec = parse_fixture(fixture)
    except (OSError, FixtureFormatError) as err:
        print(f"FAIL {name}: {err}")
        return 1
    if not spec.expectations:
        print(f"FAIL {name}: no '# expect:' line; a fixture must state what leakgate reports")
        return 1

    if not (os.path.isfile(opts.leakgate) and os.access(opts.leakgate, os.X_OK)):
        print(f"SKIP {name}: leakgate binary not found at {opts.leakgate}")
        return SKIP

    with tempfile.TemporaryDirectory(prefix="leakgate-fixture-") as tmp:
        json_path = os.path.join(tmp, "report.json")
        command = [opts.leakgate, "scan", "--json", json_path, *spec.args, "--", fixture]
        shown = shlex.join(command)
        try:
            proc = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=opts.run_timeout,
            )
        except subprocess.TimeoutExpired as err:
            print(f"FAIL {name}: leakgate did not finish within {opts.run_timeout:g} s")
            print(f"  command: {shown}")
            print("  stderr:\n" + _tail(err.stderr.decode(errors="replace") if err.stderr else ""))
            return 1
        if not os.path.exists(json_path):
            print(f"FAIL {name}: leakgate wrote no JSON report (exit {proc.returncode})")
            print(f"  command: {shown}")
            print("  leakgate stderr:\n" + _tail(proc.stderr))
            if proc.stdout.strip():
                print("  leakgate stdout:\n" + _tail(proc.stdout))
            return 1
        try:
            with open(json_path, encoding="utf-8") as handle:
                report = json.load(handle)
        except (OSError, ValueError) as err:
            print(f"FAIL {name}: JSON report unreadable: {err}")
            print(f"  command: {shown}")
            print("  leakgate stderr:\n" + _tail(proc.stderr))
            return 1

    problems = []
    if not isinstance(report, dict):
        problems.append(f"report is a {type(report).__name__}, not an object")
        report = {}
    if report.get("schema") != SCHEMA:
        problems.append(f"schema is {report.get('schema')!r}, expected {SCHEMA!r}")
    if report.get("command") != "scan":
        problems.append(f"command is {report.get('command')!r}, expected 'scan'")
    for key in ("results", "checks", "findings"):
        if not isinstance(report.get(key), list):
            problems.append(f"{key!r} is missing or not a list")
    if report.get("exit_code") != proc.returncode:
        problems.append(
            f"report says exit_code {report.get('exit_code')!r} but leakgate exited {proc.returncode}"
        )

    version = _version_tuple(opts.python_version) or report_python_version(report)
    co_name_only = version is not None and version < (3, 11)
    if spec.conditional and version is None:
        problems.append("the fixture's expectations depend on the Python, and neither "
                        "--python-version nor the report says which Python ran")
    elif spec.conditional:
        try:
            spec = spec.for_python(version)
        except FixtureFormatError as err:
            print(f"FAIL {name}: {err}")
            return 1
    verdicts = check_expectations(spec, proc.returncode, report, co_name_only)
    failed = problems or not all(v.ok for v in verdicts)

    print(f"{'FAIL' if failed else 'PASS'} {name}")
    if failed:
        print(f"  command: {shown}")
        if co_name_only:
            print("  (Python < 3.11: function names compared by co_name)")
        for problem in problems:
            print(f"  report: {problem}")
        width = max(len(v.expectation.describe()) for v in verdicts)
        print(f"  {'expected'.ljust(width)}    found")
        for v in verdicts:
            mark = "ok  " if v.ok else "FAIL"
            print(f"  {v.expectation.describe().ljust(width)} {mark} {v.detail}")
        print("  report:")
        print("\n".join(describe_report(report)))
        if proc.stderr.strip():
            print("  leakgate stderr:\n" + _tail(proc.stderr, 2000))
        return 1
    for v in verdicts:
        print(f"  ok  {v.expectation.describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
