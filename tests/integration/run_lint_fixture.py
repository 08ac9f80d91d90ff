#!/usr/bin/env python3
"""Run `leakgate lint` on fixtures and check the expectations written inside them.

Usage:
    run_lint_fixture.py --leakgate BUILD/leakgate PATH...
    run_lint_fixture.py --rules lib/lint/python_rules PATH...      (the rules alone, no binary)

PATH is a fixture file or a directory of them (`fixtures/lint/`); all of them are linted in one
run, as `leakgate lint --json TMP --quiet PATH...`, and each file's findings are checked against
its own expectation lines:

    x = inspect.currentframe()  # expect-lint: own-frame-local name=x
    last_frame = PyEval_GetFrame(); // expect-lint: frame-stored-static name=last_frame
    # expect-lint: frame-stored line=+1 name=self.frame function=Tracker.__init__ column=9
    t, v, tb = sys.exc_info()  # expect-lint: own-frame-local name=v; own-frame-local name=tb
    # expect-lint: none
    # expect-lint: unparsed

A finding expectation names the rule, then `line` (N, or +N/-N from the comment's own line;
default: the comment's line), `name` (the finding's `locals[0]`), and optionally `function`
(`frames[0].function`) and `column` (the 1-based column leakgate reports); `;` separates
expectations on one line. Every expectation must match a finding of its own, and a file may have
no finding that no expectation matches. `none`: the file has no finding; `unparsed`: the file is
listed in `details.unparsed` and has no finding. A file without an expectation line fails.
The exit code must be 1 when some file expects a finding, else 3 when some file expects
`unparsed`, and 0 otherwise.

C and C++ fixtures (.c .cc .cpp .cxx .h .hh .hpp .hxx) carry the same lines in `//` or `/* */`
comments. In a leakgate built without libclang (the report's `lint-cxx` check is skipped) their
expectations are not checked, and a run of C/C++ fixtures alone is skipped.

Exit status: 0 all expectations hold, 1 a mismatch, 77 skipped (no binary at --leakgate; CTest's
SKIP_RETURN_CODE). Standard library only; Python 3.10+.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
SCHEMA = "leakgate/1"
KEYS = ("line", "name", "function", "column")

_DIRECTIVE = re.compile(r"(?:#|//|/\*|^\s*\*)\s*expect-lint\s*:\s*(.*?)\s*(?:\*/)?\s*$")
CXX_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx")


class FixtureFormatError(Exception):
    """An expectation line cannot be understood."""


@dataclasses.dataclass
class Expectation:
    verb: str  # a rule, "none" or "unparsed"
    props: dict[str, str]
    line: int  # where the comment is
    text: str

    def matches(self, finding: dict) -> bool:
        if finding["rule"] != self.verb:
            return False
        return all(str(finding[key]) == value for key, value in self.props.items())


def parse_expectations(path: str) -> list[Expectation]:
    expectations = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, text in enumerate(handle, start=1):
            match = _DIRECTIVE.search(text)
            if not match:
                continue
            for part in match.group(1).split(";"):
                expectations.append(_parse_one(path, number, part.strip()))
    return expectations


def _parse_one(path: str, number: int, text: str) -> Expectation:
    words = text.split()
    if not words:
        raise FixtureFormatError(f"{path}:{number}: empty expectation")
    verb, props = words[0], {}
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if not sep or key not in KEYS:
            raise FixtureFormatError(f"{path}:{number}: unknown property {word!r}")
        props[key] = value
    if verb in ("none", "unparsed"):
        if props:
            raise FixtureFormatError(f"{path}:{number}: `{verb}` takes no properties")
    else:
        line = props.get("line", "+0")
        if line[0] in "+-":  # relative to the comment's own line
            props["line"] = str(number + int(line))
    return Expectation(verb, props, number, text)


def fixture_files(paths: list[str]) -> list[str]:
    files = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                files.extend(os.path.join(root, n) for n in sorted(names)
                             if n.endswith(".py") or n.endswith(CXX_SUFFIXES))
        else:
            files.append(path)
    return [os.path.realpath(f) for f in files]


def flatten(report: dict) -> tuple[list[dict], set[str]]:
    """The report's findings as {rule, file, line, column, name, function}, and unparsed files."""
    findings = []
    for finding in report.get("findings", []):
        kind = finding["kind"]
        if not kind.startswith("lint:"):
            continue
        frame = finding["frames"][0] if finding["frames"] else {}
        column = next((step["label"] for step in finding["path"] if step["kind"] == "column"), "")
        findings.append({
            "rule": kind[len("lint:"):],
            "file": os.path.realpath(frame.get("file", "")),
            "line": frame.get("line", 0),
            "column": column,
            "name": finding["locals"][0] if finding["locals"] else "",
            "function": frame.get("function", ""),
            "summary": finding["summary"],
        })
    unparsed = set()
    for result in report.get("results", []):
        for entry in result.get("details", {}).get("unparsed", []):
            unparsed.add(os.path.realpath(entry["file"]))
    return findings, unparsed


def run_leakgate(binary: str, paths: list[str]) -> tuple[int, dict | None, str]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        proc = subprocess.run([binary, "lint", "--json", out, "--quiet", *paths],
                              capture_output=True, text=True, timeout=600)
        report = None
        if os.path.exists(out):
            with open(out, encoding="utf-8") as handle:
                report = json.load(handle)
        return proc.returncode, report, proc.stderr


def load_rules(folder: str, name: str):
    """The rules' package (lib/lint/python_rules/) imported from its folder under `name`, as the
    worker loads it: nothing of the folder's parent on sys.path."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    rules = importlib.util.module_from_spec(spec)
    sys.modules[name] = rules  # its modules import each other through it
    spec.loader.exec_module(rules)
    return rules


def run_rules(rules_path: str, paths: list[str]) -> tuple[int, dict, str]:
    """The rules alone, shaped like leakgate's report (for checking fixtures without a build)."""
    rules = load_rules(rules_path, "_leakgate_lint")
    answer = json.loads(rules.lint_paths(paths))
    findings = [{
        "kind": "lint:" + f["rule"], "summary": f["message"], "locals": [f["name"]],
        "frames": [{"function": f["function"], "file": f["file"], "line": f["line"]}],
        "path": [{"kind": "column", "label": str(f["column"]), "to": ""}],
    } for f in answer["findings"]]
    # As leakgate decides: a finding is 1, else a file not analysed is 3 (an error), else 0.
    exit_code = 1 if findings else 3 if answer["unparsed"] else 0
    report = {"schema": SCHEMA, "command": "lint", "exit_code": exit_code,
              "findings": findings, "results": [{"details": {"unparsed": answer["unparsed"]}}]}
    return report["exit_code"], report, ""


def cxx_skipped(report: dict | None) -> bool:
    """Whether this leakgate left C/C++ files unchecked (built without libclang)."""
    return any(check.get("name") == "lint-cxx" and check.get("status") == "skip"
               for result in (report or {}).get("results", []) for check in result.get("checks", []))


def check(paths: list[str], code: int, report: dict | None, stderr: str) -> list[str]:
    problems = []
    if report is None:
        return [f"no JSON report (exit {code}); stderr:\n{stderr}"]
    skip_cxx = cxx_skipped(report)
    if report.get("schema") != SCHEMA or report.get("command") != "lint":
        problems.append(f"report has schema {report.get('schema')!r}, command {report.get('command')!r}")
    if report.get("exit_code") != code:
        problems.append(f"report says exit_code {report.get('exit_code')}, the process exited {code}")
    findings, unparsed = flatten(report)
    expect_findings = False
    expect_unparsed = False
    for path in fixture_files(paths):
        if skip_cxx and path.endswith(CXX_SUFFIXES):
            continue
        try:
            expectations = parse_expectations(path)
        except FixtureFormatError as error:
            problems.append(str(error))
            continue
        if not expectations:
            problems.append(f"{path}: no `# expect-lint:` line")
            continue
        mine = [f for f in findings if f["file"] == path]
        verbs = {e.verb for e in expectations}
        expect_unparsed |= "unparsed" in verbs
        if "unparsed" in verbs and path not in unparsed:
            problems.append(f"{path}: expected in details.unparsed, it is not")
        if "unparsed" not in verbs and path in unparsed:
            problems.append(f"{path}: did not parse")
        left = list(mine)
        for expectation in expectations:
            if expectation.verb in ("none", "unparsed"):
                continue
            expect_findings = True
            match = next((f for f in left if expectation.matches(f)), None)
            if match is None:
                problems.append(f"{path}:{expectation.line}: no finding for `{expectation.text}`")
            else:
                left.remove(match)
        for finding in left:
            problems.append(f"{path}:{finding['line']}: unexpected {finding['rule']} "
                            f"name={finding['name']} function={finding['function']} "
                            f"column={finding['column']}: {finding['summary']}")
    # A file that could not be analysed makes the run an error (3), unless something was found (1).
    wanted = 1 if expect_findings else 3 if expect_unparsed else 0
    if code != wanted:
        problems.append(f"exit {code}, expected {wanted}; stderr:\n{stderr}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--leakgate", help="the leakgate binary")
    group.add_argument("--rules", help="lib/lint/python_rules (the folder), run without leakgate")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    if args.leakgate and not os.access(args.leakgate, os.X_OK):
        print(f"skip: no leakgate binary at {args.leakgate}")
        return SKIP
    if args.leakgate:
        code, report, stderr = run_leakgate(args.leakgate, args.paths)
    else:
        code, report, stderr = run_rules(args.rules, args.paths)
    problems = check(args.paths, code, report, stderr)
    if cxx_skipped(report) and all(f.endswith(CXX_SUFFIXES) for f in fixture_files(args.paths)):
        print("skip: this leakgate was built without libclang")
        return SKIP
    findings, _ = flatten(report or {})
    if problems:
        print(f"FAIL: {len(problems)} problem(s)")
        for problem in problems:
            print("  " + problem)
        print("found:")
        for f in findings:
            print(f"  {f['file']}:{f['line']}:{f['column']} {f['rule']} name={f['name']} "
                  f"function={f['function']}")
        return 1
    print(f"ok: {len(findings)} finding(s) as expected in {len(fixture_files(args.paths))} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
