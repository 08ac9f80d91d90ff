"""What the `dsl` tests share: one release of a built-in target gated through `leakgate bisect`
(which makes the release's venv), and the real-launch figures of its report held to
tests/gpu/real_launch_count.py, the plain count run in the same venv.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Unavailable(Exception):
    """The release could not be gated: `skip` (exit 77) when PyPI could not serve it, else a failure."""

    def __init__(self, message, skip):
        super().__init__(message)
        self.exit_code = 77 if skip else 1
        self.message = ("skip: " if skip else "FAIL: ") + message


def gate_release(leakgate, target, version, checks, launch_calls=1000, launch_runs=3, package=None):
    """The bisect row of `version` (`row["report"]` is its gate report); raises Unavailable. With
    `package`, the distribution bisect must have installed for the target (no --package given)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bisect.json")
        run = subprocess.run([leakgate, "bisect", "--quiet", "--target", target, "--versions", version,
                              "--checks", checks, "--launch-calls", str(launch_calls), "--launch-runs",
                              str(launch_runs), "--json", out],
                             capture_output=True, text=True, timeout=2400)
        if not os.path.exists(out):
            raise Unavailable(f"no bisect report for {target} (exit {run.returncode})\n{run.stderr[-3000:]}", False)
        with open(out) as report_file:
            report = json.load(report_file)
    if package is not None and report["package"] != package:
        raise Unavailable(f"bisect --target {target} gated {report['package']!r}, not {package}", False)
    row = report["versions"][0]
    if row["status"] == "error":
        error = row["error"]
        if "cannot download" in error or "cannot make" in error:
            raise Unavailable(f"{target} {version} could not be installed (is PyPI reachable?): {error[:400]}", True)
        raise Unavailable(f"{target}: {error}", False)
    return row


def run_tests(gate, why_311):
    """A dsl test's main: takes --leakgate BUILD/leakgate from argv; exit 77 (skip) without the
    binary or off CPython 3.11 (`why_311` says why 3.11 only); `gate(leakgate)` gates the releases
    (Unavailable: skip or fail), then the calling module's test cases run."""
    leakgate = sys.argv.pop(sys.argv.index("--leakgate") + 1)
    sys.argv.remove("--leakgate")
    if not os.access(leakgate, os.X_OK):
        print("skip: no leakgate binary")
        return 77
    if sys.version_info[:2] != (3, 11):
        print(f"skip: runs on CPython 3.11 only (this is {sys.version.split()[0]}): {why_311}")
        return 77
    try:
        gate(leakgate)
    except Unavailable as unavailable:
        print(unavailable.message)
        return unavailable.exit_code
    result = unittest.main(module="__main__", argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


def check_real_launch(test, row, target_file, calls=1000, runs=3, blocks_delta=None):
    """Holds the row's launch-real result, run on the CPU, to the plain count of the same launches:
    the same cases, objects of cyclic garbage per launch within 0.1 and the check failing where any
    case leaves some in every run; with `blocks_delta`, net blocks within that fraction, and the
    check failing where the plain count keeps some (the plain count reads the object allocator's
    blocks, leakgate every domain's, so not the other way). Without it
    blocks are not judged: a bounded cache still filling in the plain count's shorter loop (Warp's
    on the CPU: 1.0 block per launch for the first 1,800 or so) reads as kept there."""
    checks = {c["name"]: c["status"] for r in row["report"]["results"] if r["role"] == "target" for c in r["checks"]}
    launch = next(r for r in row["report"]["results"] if r["workload"] == "launch-real" and r["role"] == "target")
    test.assertIsNone(launch.get("error"), launch.get("error"))
    test.assertEqual(launch["details"]["device"], "cpu")
    run = subprocess.run([row["report"]["python"]["executable"], "-W", "ignore",
                          os.path.join(ROOT, "tests/gpu/real_launch_count.py"), os.path.join(ROOT, target_file),
                          "cpu", str(calls), str(runs)],
                         capture_output=True, text=True, timeout=900)
    test.assertEqual(run.returncode, 0, run.stderr[-3000:])
    counted = json.loads(run.stdout[run.stdout.index("{"):])["cases"]
    cases = {c["case"]: c for c in launch["details"]["cases"]}
    test.assertEqual(set(cases), set(counted))
    for name, count in counted.items():
        with test.subTest(case=name):
            garbage = min(cases[name]["target"]["cyclic_garbage_per_call"])
            test.assertAlmostEqual(garbage, min(count["cyclic_garbage"]), delta=0.1)
            if blocks_delta is not None:
                blocks = min(cases[name]["target"]["net_blocks_per_call"])
                test.assertAlmostEqual(blocks, min(count["net_blocks"]),
                                       delta=blocks_delta * max(1.0, min(count["net_blocks"])))
    # A check fails when any case keeps more than 0.01 per launch in every run.
    worst = {key: max(min(count[key]) for count in counted.values()) for key in ("cyclic_garbage", "net_blocks")}
    test.assertEqual(checks["launch-real-cyclic-garbage"], "fail" if worst["cyclic_garbage"] > 0.01 else "pass", worst)
    if blocks_delta is not None and worst["net_blocks"] > 0.01:
        # One way only: leakgate counts every allocator domain, so it may see blocks the plain count
        # does not (JAX 0.10.2's jnp-scalar case reads 0.001 to 0.019 per launch from run to run,
        # past 0.01 in every run once on a loaded machine, where the plain count read 0.003).
        test.assertEqual(checks["launch-real-net-blocks"], "fail", worst)
    for check in ("launch-real-net-blocks", "launch-real-cyclic-garbage", "launch-real-retained"):
        test.assertIn(checks[check], ("pass", "fail"), check)
