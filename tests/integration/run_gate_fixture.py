#!/usr/bin/env python3
"""Runs `leakgate gate` on a target and checks the expectations written in it.

    run_gate_fixture.py --leakgate BUILD/leakgate TARGET [--expect "exit=0 ..."]

TARGET is a path or a built-in target name. Expectations come from the target's
`# expect: key=value ...` lines, or from --expect for built-in targets:
  exit=N        leakgate's exit code
  check=NAME    that check of the target fails when exit=1, passes when exit=0
  verdict=V     every sentinel of the target's decorate workload has verdict V
  verdicts=A,B  the verdicts among those sentinels are exactly A, B, ...; with more than one, the
                sentinels check's reason gives each its count and its own bytes
  culprit=Q     some finding's culprit frame is Q (3.10 has no qualified names:
                only the last dotted part is compared there)
  local=NAME    that finding's `locals` include NAME
  reasons=A,B   the launch-path reasons that apply (allocations, cyclic-garbage,
                unbounded, wrong-bytes): their checks fail, the others of the four pass
  real=A,B      the real-launch checks that fail (net-blocks, cyclic-garbage, retained; `none`:
                all pass), or `skip-without-cuda`: all skip when the machine has no CUDA driver
  held-by=TEXT  the decorate workload's never-freed sentinels are held by a route containing TEXT
                (details.never_freed_held_by, the path from a root), and the sentinels check's
                reason names that route
  pass=CHECK    that check of the target passes, whatever exit= says (may repeat)
  error=W       the target's workload W is an `error` result (may repeat)
  ok=W          the target's workload W is not an `error` result (may repeat)
  error-says=T  the message of some `error` result of the target contains T (may repeat)
  finding-says=T  the summary of some finding of the target contains T (may repeat)
Exit status: 0 pass, 1 mismatch, 77 skip (no leakgate binary).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def read_expectations(target, extra):
    tokens = list(extra.split()) if extra else []
    if os.path.isfile(target):
        with open(target, encoding="utf-8") as source:
            for line in source:
                if line.startswith("# expect:"):
                    tokens += line[len("# expect:"):].split()
    expect = {"error": [], "ok": [], "pass": [], "error-says": [], "finding-says": []}
    for token in tokens:
        key, _, value = token.partition("=")
        if key not in {"exit", "check", "verdict", "verdicts", "culprit", "local", "error", "ok", "reasons",
                       "real", "held-by", "pass", "error-says", "finding-says"} or not value:
            raise SystemExit(f"unknown expectation {token!r}")
        if key in ("error", "ok", "pass", "error-says", "finding-says"):
            expect[key].append(value)
        else:
            expect[key] = value
    if "exit" not in expect:
        raise SystemExit(f"{target}: no `# expect: exit=N` line (a test must be able to fail)")
    return expect


def same_function(found, wanted, python_version):
    if python_version < (3, 11):
        return found.split(".")[-1] == wanted.split(".")[-1]
    return found == wanted


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    parser.add_argument("--expect", default="")
    parser.add_argument("--gate-args", default="", help="extra gate options, space-separated")
    parser.add_argument("target")
    args = parser.parse_args()
    if not os.access(args.leakgate, os.X_OK):
        print(f"skip: no leakgate binary at {args.leakgate}")
        return 77
    expect = read_expectations(args.target, args.expect)

    with tempfile.TemporaryDirectory(prefix="leakgate-gate-test-") as tmp:
        report_path = os.path.join(tmp, "report.json")
        command = [args.leakgate, "gate", "--quiet", "--target", args.target, "--json", report_path,
                   *args.gate_args.split()]
        run = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if not os.path.exists(report_path):
            print(f"FAIL: no JSON report from {' '.join(command)} (exit {run.returncode})\n{run.stderr}")
            return 1
        with open(report_path, encoding="utf-8") as report_file:
            report = json.load(report_file)

    problems = []
    version = tuple(int(part) for part in report["python"]["version"].split(".")[:2])
    if report["schema"] != "leakgate/1" or report["command"] != "gate":
        problems.append(f"unexpected schema/command: {report['schema']} {report['command']}")
    if run.returncode != int(expect["exit"]) or report["exit_code"] != run.returncode:
        problems.append(f"exit: expected {expect['exit']}, got {run.returncode} (JSON says {report['exit_code']})")
    targets = [result for result in report["results"] if result["role"] == "target"]
    checks = {check["name"]: check for result in targets for check in result["checks"]}
    if "check" in expect:
        wanted = "fail" if expect["exit"] == "1" else "pass"
        check = checks.get(expect["check"])
        if check is None or check["status"] != wanted:
            problems.append(f"check {expect['check']}: expected {wanted}, got {check}")
    for name in expect["pass"]:
        status = checks.get(name, {}).get("status")
        if status != "pass":
            problems.append(f"check {name}: expected pass, got {checks.get(name)}")
    if "verdict" in expect:
        sentinels = [s for r in targets if r["workload"] == "decorate" for s in r["sentinels"]]
        wrong = [s for s in sentinels if s["verdict"] != expect["verdict"]]
        if not sentinels or wrong:
            problems.append(f"verdict: expected every sentinel {expect['verdict']}; "
                            f"{len(sentinels)} sentinels, differing: {wrong[:3]}")
    if "verdicts" in expect:
        sentinels = [s for r in targets if r["workload"] == "decorate" for s in r["sentinels"]]
        found = {s["verdict"] for s in sentinels}
        wanted = set(expect["verdicts"].split(","))
        reason = checks.get("decorate-sentinels", {}).get("reason", "")
        counted = {v: sum(1 for s in sentinels if s["verdict"] == v) for v in wanted}
        # With two verdicts, each count comes with its own bytes ("19 never-freed, 152.0 MiB ...").
        own_bytes = len(wanted) == 1 or all(
            re.search(rf"\b{n} {v}, [0-9.]+ (B|KiB|MiB|GiB)", reason) for v, n in counted.items())
        if found != wanted or not own_bytes:
            problems.append(f"verdicts: expected {sorted(wanted)}, got {sorted(found)}; reason: {reason}")
    if "held-by" in expect:
        decorate = [r for r in targets if r["workload"] == "decorate"]
        routes = [h["route"] for r in decorate for h in r.get("details", {}).get("never_freed_held_by", [])]
        reason = checks.get("decorate-sentinels", {}).get("reason", "")
        named = [route for route in routes if expect["held-by"] in route and route in reason]
        if not named:
            problems.append(f"held-by: no never-freed holder route with {expect['held-by']!r} named in the "
                            f"reason; routes {routes}; reason: {reason}")
    if "culprit" in expect:
        findings = [f for r in targets for f in r["findings"]]
        matching = [f for f in findings
                    if f["frames"] and same_function(f["frames"][0]["function"], expect["culprit"], version)
                    and ("local" not in expect or expect["local"] in f["locals"])]
        if not matching:
            problems.append(f"no finding with culprit {expect['culprit']} and local {expect.get('local')}: "
                            f"{[(f['frames'][:1], f['locals']) for f in findings]}")
    if "reasons" in expect:
        reason_checks = {"allocations": "launch-allocations", "cyclic-garbage": "launch-cyclic-garbage",
                         "unbounded": "values-bounded", "wrong-bytes": "values-encoding"}
        wanted = set(expect["reasons"].split(",")) - {"none"}
        unknown = wanted - set(reason_checks)
        if unknown:
            raise SystemExit(f"unknown reasons {sorted(unknown)}")
        for reason, check_name in reason_checks.items():
            want = "fail" if reason in wanted else "pass"
            got = checks.get(check_name, {}).get("status")
            if got != want:
                problems.append(f"reason {reason}: {check_name} should {want}, got {got}: "
                                f"{checks.get(check_name, {}).get('reason')}")
    if "real" in expect:
        real_checks = ("net-blocks", "cyclic-garbage", "retained")
        if expect["real"] == "skip-without-cuda":
            results = [r for r in targets if r["workload"] == "launch-real"]
            cuda = results[0]["details"].get("cuda", {}) if results else {}
            want = {name: "pass" if cuda.get("available") else "skip" for name in real_checks}
        else:
            wanted = set(expect["real"].split(",")) - {"none"}
            if wanted - set(real_checks):
                raise SystemExit(f"unknown real-launch checks {sorted(wanted - set(real_checks))}")
            want = {name: "fail" if name in wanted else "pass" for name in real_checks}
        for name, status_wanted in want.items():
            check = checks.get(f"launch-real-{name}", {})
            if check.get("status") != status_wanted:
                problems.append(f"launch-real-{name} should {status_wanted}, got {check.get('status')}: "
                                f"{check.get('reason')}")
    status = {result["workload"]: result["status"] for result in targets}
    for workload in expect["error"]:
        if status.get(workload) != "error":
            problems.append(f"workload {workload}: expected an error result, got {status.get(workload)}")
    for workload in expect["ok"]:
        if status.get(workload) != "ok":
            problems.append(f"workload {workload}: expected an ok result, got {status.get(workload)}")
    messages = [str(result.get("error", {}).get("message", "")) for result in targets
                if result["status"] == "error"]
    for text in expect["error-says"]:
        if not any(text in message for message in messages):
            problems.append(f"no error result says {text!r}: {messages}")
    summaries = [finding.get("summary", "") for result in targets for finding in result.get("findings", [])]
    for text in expect["finding-says"]:
        if not any(text in summary for summary in summaries):
            problems.append(f"no finding says {text!r}: {summaries}")
    if problems:
        print(f"FAIL {args.target}")
        for problem in problems:
            print("  " + problem)
        print(run.stderr[-4000:])
        return 1
    print(f"ok {args.target}: {expect}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
