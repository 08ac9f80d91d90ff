#!/usr/bin/env python3
"""Regenerates the seed corpora of tests/fuzz/corpus/ from a built leakgate and fixtures/.

    tests/fuzz/make_seeds.py build/leakgate

Seeds are real outputs, cut short where a real one is long (a launch report has 124 cases; a few
show the shape, and short inputs fuzz faster): gate, scan and lint JSON for the writers and the
baseline reader; what workers wrote to their result channel (read with strace, the token line
replaced by the harness's fixed token) for the worker-result reader; budgets files as
tests/integration/test_cli.py writes them. Files named regression-* are inputs the fuzzers found;
this script leaves them alone.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
TOKEN = b"0123456789abcdef0123456789abcdef"  # worker_result_fuzzer.cpp's kToken
RESULT_FD = "730"  # where the worker moves its result channel (lib/worker/main.cpp)
SHORT = ["--sentinel-mib", "1", "--launch-calls", "50", "--launch-runs", "2", "--soak-steps", "600",
         "--distinct-values", "2000"]


def run(leakgate, args, tmp, worker_results=False):
    """Runs leakgate; returns (its --json document, [what each worker sent])."""
    out = os.path.join(tmp, "report.json")
    command = [leakgate] + args[:1] + ["--quiet", "--json", out] + args[1:]
    sent = []
    if worker_results and shutil.which("strace"):
        trace = os.path.join(tmp, "trace")
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=write", "-e", "write=" + RESULT_FD,
                        "-s", "0", "-o", trace] + command, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        chunks, current = {}, None
        with open(trace) as lines:
            for line in lines:
                call = re.match(r"(\d+)\s+write\((\d+),", line)
                if call:
                    current = call.group(1) if call.group(2) == RESULT_FD else None
                    continue
                dump = re.match(r"\s*\| [0-9a-f]{5}  ", line)  # `| 00000  7b 22 ...  {"...`
                if dump and current:
                    hex_bytes = line[dump.end():dump.end() + 49]
                    chunks.setdefault(current, bytearray()).extend(bytes.fromhex("".join(hex_bytes.split())))
        sent = [TOKEN + b"\n" + bytes(data).partition(b"\n")[2] for data in chunks.values()]
    else:
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as report:
        return json.load(report), sent


def shortened(document, keep=6):
    """The same document with long lists cut to `keep` entries (cases, findings, samples)."""
    if isinstance(document, dict):
        return {key: shortened(value, keep) for key, value in document.items()}
    if isinstance(document, list):
        return [shortened(value, keep) for value in document[:keep]]
    return document


def write(harness, name, data):
    os.makedirs(os.path.join(CORPUS, harness), exist_ok=True)
    if isinstance(data, (dict, list)):
        data = json.dumps(data, indent=1).encode()
    with open(os.path.join(CORPUS, harness, name), "wb") as out:
        out.write(data)


def main():
    leakgate = os.path.abspath(sys.argv[1])
    os.chdir(ROOT)
    scans = {"leak": "leak_exception_kept_in_local", "coroutine": "leak_frame_cycle_in_coroutine",
             "retained": "retained_frame_in_module_registry", "raises": "error_raises_exception",
             "segfault": "error_segfault_signal"}
    gates = {"decorate": ["--target", "fixtures/targets/frame_cycle_461.py", "--checks", "decorate,import"],
             "launch": ["--target", "fixtures/targets/launch/uncached_packer.py", "--checks", "launch,soak"],
             "values": ["--target", "fixtures/targets/launch/naive_cache_packer.py", "--checks", "values"]}
    with tempfile.TemporaryDirectory() as tmp:
        reports = {}
        for name, fixture in scans.items():
            reports["scan_" + name], sent = run(
                leakgate, ["scan", "--", f"fixtures/scan/{fixture}.py"], tmp, worker_results=True)
            for data in sent:  # a scan has one worker; the raw bytes, as it sent them
                write("worker_result", f"scan_{name}", data)
        for name, args in gates.items():
            reports["gate_" + name], sent = run(leakgate, ["gate"] + args + SHORT, tmp, worker_results=True)
            for index, data in enumerate(sent):
                result = shortened(json.loads(data.partition(b"\n")[2]))
                write("worker_result", f"gate_{name}_{index}", TOKEN + b"\n" + json.dumps(result).encode())
        reports["lint"], _ = run(leakgate, ["lint", "fixtures/lint/own_frame_in_local.py",
                                            "fixtures/lint/frame_stored.py"], tmp)

    for name, report in reports.items():
        write("report_writers", name + ".json", shortened(report, keep=4))
    # A bisect table as `leakgate bisect --json` writes it (docs/reference/json.md), around two real
    # gate reports: one release measured, one whose environment could not be made.
    gate = shortened(reports["gate_decorate"], keep=4)
    write("report_writers", "bisect.json", {
        "schema": "leakgate/1", "tool": gate["tool"], "command": "bisect", "package": "nvidia-cutlass-dsl",
        "target": "cute", "python": {"version": gate["python"]["version"]}, "exit_code": 1,
        "checks": [check["name"] for check in gate["checks"]],
        "versions": [{"version": "4.4.2", "status": "ok", "error": None,
                      "checks": {check["name"]: check["status"] for check in gate["checks"]}, "report": gate},
                     {"version": "4.6.1", "status": "error", "error": "pip could not install it",
                      "checks": {}, "report": None}],
        "first_bad": {"decorate-frame-cycle": "4.4.2"}, "first_good": {}})

    for name in ("decorate", "values", "launch"):
        write("baseline", f"gate_{name}.json", shortened(reports["gate_" + name], keep=4))
    # What the baseline reader looks at, alone; and amounts at the edges it accepts.
    decorate = reports["gate_decorate"]
    write("baseline", "checks_only.json", {key: decorate[key] for key in ("schema", "command", "checks")})
    write("baseline", "edge_amounts.json", {
        "schema": "leakgate/1", "command": "gate",
        "checks": [{"name": "decorate-sentinels", "amount": None}, {"name": "soak-growth", "amount": -3},
                   {"name": "launch-allocations", "amount": 9223372036854775807},
                   {"name": "launch-net-blocks", "amount": -9223372036854775808}]})

    write("budgets", "test_cli.txt", b"# allowed growth in bytes pinned\ndecorate-sentinels = 1048576\n")
    lines = ["# every check the gate knows, at the figure of a real run, in its own unit"]
    for check in decorate["checks"] + reports["gate_launch"]["checks"] + reports["gate_values"]["checks"]:
        lines.append(f"{check['name']} = {check['amount'] or 0}  # {check['status']}")
    write("budgets", "every_check.txt", ("\n".join(lines) + "\n").encode())
    write("budgets", "edges.txt", b"\tsoak-growth=9223372036854775807\r\n\n   # only a comment\n"
                                  b"launch-allocations = 0 # none at all\n")


if __name__ == "__main__":
    main()
