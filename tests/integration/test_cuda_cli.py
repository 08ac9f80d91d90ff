#!/usr/bin/env python3
"""The CUDA checks through the CLI, without a GPU: with no driver they skip with the reason, and
with the tests' fake driver (tests/fake_cuda) the device sentinel, the device-memory probe and the
echo launch run their real code paths.

    test_cuda_cli.py --leakgate BUILD/leakgate --fake-libcuda BUILD/tests/libleakgate_fake_cuda.so
"""

import json
import os
import subprocess
import sys
import unittest

LEAKGATE = None
FAKE_LIBCUDA = None
HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = os.path.join(HERE, "..", "..", "fixtures", "targets")


def gate(*args, **env):
    environment = dict(os.environ, **env)
    run = subprocess.run([LEAKGATE, "gate", "--quiet", "--json", "-", *args], capture_output=True, text=True,
                         timeout=600, env=environment)
    try:
        report = json.loads(run.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"no JSON report (exit {run.returncode}): {run.stderr[-2000:]}")
    return run.returncode, report


def checks_of(report, role="target"):
    return {check["name"]: check for result in report["results"] if result["role"] == role
            for check in result["checks"]}


def result_of(report, workload, role="target"):
    return next(r for r in report["results"] if r["workload"] == workload and r["role"] == role)


class WithoutADriver(unittest.TestCase):
    def test_every_cuda_check_skips_with_the_reason(self):
        code, report = gate("--target", "reference", "--checks", "decorate-device-memory,device",
                            LEAKGATE_LIBCUDA="/nonexistent/libcuda.so.1")
        self.assertEqual(code, 0)
        checks = checks_of(report)
        self.assertEqual(sorted(checks), ["decorate-device-memory", "device-allocations",
                                          "device-cyclic-garbage", "device-echo"])
        for name, check in checks.items():
            self.assertEqual(check["status"], "skip", name)
            self.assertIn("no CUDA driver: cannot load /nonexistent/libcuda.so.1", check["reason"])

    def test_a_driver_without_a_device_is_a_skip_naming_the_error(self):
        code, report = gate("--target", "reference", "--checks", "device", LEAKGATE_LIBCUDA=FAKE_LIBCUDA,
                            LEAKGATE_FAKE_CUDA_INIT="100")
        self.assertEqual(code, 0)
        for check in checks_of(report).values():
            self.assertEqual(check["status"], "skip")
            self.assertIn("cuInit failed: CUDA_ERROR_NO_DEVICE", check["reason"])


class WithTheFakeDriver(unittest.TestCase):
    def test_the_frame_cycle_model_pins_the_device_sentinel_until_a_collection(self):
        code, report = gate("--target", os.path.join(TARGETS, "frame_cycle_461.py"), "--checks", "decorate",
                            "--sentinel-mib", "1", "--device-sentinel-mib", "2", LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        self.assertEqual(code, 1)
        device = checks_of(report)["decorate-device-memory"]
        self.assertEqual(device["status"], "fail")
        self.assertIn("of device memory pinned until gc.collect()", device["reason"])
        self.assertIn("0 B still held after one collection", device["reason"])
        target = result_of(report, "decorate")
        verdicts = {s["verdict"] for s in target["sentinels"] if s["kind"] == "device"}
        self.assertEqual(verdicts, {"freed-by-gc-only"})
        details = target["details"]["device_memory"]
        self.assertEqual(details["held_after_return"], device["amount"])
        self.assertEqual(details["held_after_collection"], 0)
        self.assertEqual(details["meminfo_used_after_return"], details["held_after_return"])
        self.assertTrue(details["meminfo_agrees"])
        # The reference frees its device sentinels by reference counting.
        reference = checks_of(report, "reference")["decorate-device-memory"]
        self.assertEqual(reference["status"], "pass", reference["reason"])
        self.assertIn("freed by reference counting", reference["reason"])

    def test_the_reference_packer_reaches_the_kernel_byte_exact_and_allocates_nothing_per_launch(self):
        code, report = gate("--target", "reference", "--checks", "device", "--launch-calls", "300",
                            "--launch-runs", "2", LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        checks = checks_of(report)
        if checks["device-echo"]["status"] == "skip":
            self.skipTest(checks["device-echo"]["reason"])  # a build without nvcc
        self.assertEqual(code, 0, checks)
        self.assertEqual(checks["device-echo"]["status"], "pass")
        self.assertEqual(checks["device-allocations"]["status"], "pass")
        loops = result_of(report, "device")["details"]["launch_loops"]
        self.assertEqual(len(loops), 14)
        for loop in loops:
            # Nothing per launch: below the per-call noise floor the launch checks use (0.01; on
            # 3.10 one allocation in a run of 300 launches is the interpreter's, not the packer's).
            for per_call in loop["target"]["allocations_per_call"]:
                self.assertLess(per_call, 0.01, loop["type"])

    def test_the_uncached_packer_is_flagged_per_launch(self):
        code, report = gate("--target", os.path.join(TARGETS, "launch", "uncached_packer.py"), "--checks",
                            "device", "--launch-calls", "300", "--launch-runs", "2",
                            LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        checks = checks_of(report)
        if checks["device-echo"]["status"] == "skip":
            self.skipTest(checks["device-echo"]["reason"])
        self.assertEqual(code, 1)
        self.assertEqual(checks["device-echo"]["status"], "pass", checks["device-echo"]["reason"])
        self.assertEqual(checks["device-allocations"]["status"], "fail")
        self.assertEqual(checks["device-cyclic-garbage"]["status"], "fail")
        self.assertIn("per launch (reference: 0.00)", checks["device-allocations"]["reason"])

    def test_the_reference_is_measured_before_the_target_can_serve_another(self):
        # GIVEN a target that leaks a ctypes cycle per packing and, at import, serves its own
        # `leakgate_reference` with the same packer, THEN the device workload measured the real
        # reference before the target was imported: the hook changes nothing and the leak fails.
        target = os.path.join(HERE, "..", "faults", "cases", "reference_runtime_served_by_target.py")
        code, report = gate("--target", target, "--checks", "device", "--launch-calls", "300",
                            "--launch-runs", "2", LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        checks = checks_of(report)
        if checks["device-echo"]["status"] == "skip":
            self.skipTest(checks["device-echo"]["reason"])
        self.assertEqual(code, 1, checks)
        self.assertEqual(checks["device-echo"]["status"], "pass", checks["device-echo"]["reason"])
        self.assertEqual(checks["device-cyclic-garbage"]["status"], "fail", checks["device-cyclic-garbage"])
        self.assertIn("(reference: 0.00)", checks["device-cyclic-garbage"]["reason"])

    def test_the_real_launch_runs_on_cuda_against_the_echo_kernel_reference(self):
        # cuda_only.py declares CUDA only: with a driver, its cases run there, and the reference is
        # the echo kernel launched with the reference packer in the same worker.
        code, report = gate("--target", os.path.join(TARGETS, "real_launch", "cuda_only.py"), "--checks",
                            "launch-real", "--launch-calls", "300", "--launch-runs", "2",
                            LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        checks = checks_of(report)
        if checks["launch-real-net-blocks"]["status"] == "skip":
            self.skipTest(checks["launch-real-net-blocks"]["reason"])
        self.assertEqual(code, 0, checks)
        launch = result_of(report, "launch-real")
        self.assertEqual(launch["details"]["device"], "cuda")
        for case in launch["details"]["cases"]:
            self.assertEqual(len(case["reference"]["net_blocks_per_call"]), 2)
            self.assertLess(max(case["reference"]["cyclic_garbage_per_call"]), 0.01)
        for name, check in checks.items():
            self.assertEqual(check["status"], "pass", (name, check["reason"]))
            self.assertIn("on cuda", check["reason"])

    def test_a_cpu_model_that_leaks_per_launch_fails_on_cuda_too(self):
        code, report = gate("--target", os.path.join(TARGETS, "real_launch", "cast_per_launch.py"),
                            "--checks", "launch-real", "--launch-calls", "300", "--launch-runs", "2",
                            LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        # It declares the CPU only, so it runs there even with a driver.
        self.assertEqual(result_of(report, "launch-real")["details"]["device"], "cpu")
        self.assertEqual(code, 1)
        self.assertEqual(checks_of(report)["launch-real-cyclic-garbage"]["status"], "fail")


SCAN_SCRIPT = os.path.join(HERE, "..", "..", "fixtures", "cuda", "scan_device_sentinel_in_cycle.py")


def scan(script, *args, **env):
    environment = dict(os.environ, **env)
    run = subprocess.run([LEAKGATE, "scan", "--quiet", "--json", "-", "--", script, *args], capture_output=True,
                         text=True, timeout=300, env=environment)
    try:
        return run.returncode, json.loads(run.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"no JSON report (exit {run.returncode}): {run.stderr[-2000:]}")


class ScanOfAScriptsOwnSentinels(unittest.TestCase):
    def test_a_device_sentinel_in_a_frame_cycle_is_measured_and_said_beside_the_cycle(self):
        code, report = scan(SCAN_SCRIPT, LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        self.assertEqual(code, 1)
        checks = checks_of(report)
        self.assertEqual(checks["device-memory"]["status"], "fail", checks["device-memory"])
        self.assertIn("64.0 MiB (67108864 bytes) of device memory pinned until gc.collect()",
                      checks["device-memory"]["reason"])
        self.assertIn("freed by the collection", checks["device-memory"]["reason"])
        self.assertIn("freed-by-gc-only", checks["sentinels"]["reason"])
        self.assertIn("in all, and 64.0 MiB (67108864 bytes) of device memory;",
                      checks["frame-cycle"]["reason"])
        details = report["results"][0]["details"]
        self.assertEqual(details["pinned_payload_bytes"], {"device": 64 << 20})
        self.assertEqual(details["device_memory"]["held_after_return"], 64 << 20)
        self.assertEqual(details["device_memory"]["held_after_collection"], 0)

    def test_each_finding_counts_the_device_payloads_it_pins_and_no_other(self):
        script = os.path.join(HERE, "..", "..", "fixtures", "cuda", "scan_two_cycles_one_device_sentinel.py")
        code, report = scan(script, LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        self.assertEqual(code, 1)
        cycles = {f["frames"][0]["function"]: f for f in report["findings"] if f["kind"] == "frame-cycle"}
        self.assertEqual(sorted(cycles), ["load_config", "train_step"], report["findings"])
        self.assertEqual(cycles["train_step"]["payload_bytes"], {"device": 64 << 20})
        self.assertNotIn("payload_bytes", cycles["load_config"])
        self.assertEqual(report["results"][0]["details"]["pinned_payload_bytes"], {"device": 64 << 20})
        text = subprocess.run([LEAKGATE, "scan", "--no-color", "--", script], capture_output=True, text=True,
                              timeout=300, env=dict(os.environ, LEAKGATE_LIBCUDA=FAKE_LIBCUDA)).stdout
        pins = [line for line in text.splitlines() if line.startswith("  pins ") and "object" in line]
        self.assertEqual(len(pins), 2, text)
        self.assertEqual(sum("and 64.0 MiB (67108864 bytes) of device memory" in line for line in pins), 1, text)
        # the device memory counts in the order of the findings: train_step's first
        self.assertEqual(report["findings"][0]["frames"][0]["function"], "train_step")

    def test_the_programs_own_device_memory_in_a_cycle_fails_by_the_driver_and_the_graph_pool(self):
        # GIVEN a program with no sentinel whose frame cycle holds 128 MiB of cuMemAlloc memory and
        # 32 MiB of the graph memory pool, THEN both witnesses see the collection free it: FAIL.
        script = os.path.join(HERE, "..", "..", "fixtures", "cuda", "scan_program_memory_in_a_frame_cycle.py")
        code, report = scan(script, LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        self.assertEqual(code, 1)
        check = checks_of(report)["device-memory"]
        self.assertEqual(check["status"], "fail", check)
        self.assertIn("128.0 MiB (134217728 bytes) of the program's device memory was freed only by gc.collect()",
                      check["reason"])
        self.assertIn("the CUDA graph memory pool: 32.0 MiB (33554432 bytes) after return, 0 B after collection",
                      check["reason"])
        details = report["results"][0]["details"]["device_memory"]
        self.assertEqual(details["graph_pool_used_after_return"] - details["graph_pool_used_after_collection"],
                         32 << 20)
        # AND without the cycle both are freed at the return: PASS, the graph pool not mentioned.
        code, report = scan(script, "clean", LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        check = checks_of(report)["device-memory"]
        self.assertEqual((code, check["status"]), (0, "pass"), check)
        self.assertNotIn("graph memory pool", check["reason"])

    def test_warps_pools_and_jaxs_allocator_witness_the_programs_device_memory(self):
        # GIVEN a program (stand-ins of the two counters leakgate reads, the fake driver loaded) whose
        # frame cycle holds 16 MiB of a Warp pool and 24 MiB of JAX's allocator, THEN each counter
        # sees the collection free its part: FAIL, by the larger.
        script = os.path.join(HERE, "..", "..", "fixtures", "cuda", "scan_warp_and_jax_pools_in_a_frame_cycle.py")
        code, report = scan(script, LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        check = checks_of(report)["device-memory"]
        self.assertEqual((code, check["status"]), (1, "fail"), check)
        self.assertIn("Warp's memory pools: 16.0 MiB (16777216 bytes) after return, 0 B after collection",
                      check["reason"])
        self.assertIn("JAX's GPU allocator: 24.0 MiB (25165824 bytes) after return, 0 B after collection",
                      check["reason"])
        details = report["results"][0]["details"]["device_memory"]
        self.assertEqual(details["freed_by_collection"], 24 << 20)
        # AND without the cycle both are returned at the return: PASS.
        code, report = scan(script, "clean", LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        check = checks_of(report)["device-memory"]
        self.assertEqual((code, check["status"]), (0, "pass"), check)
        self.assertIn("Warp's memory pools: 0 B after return", check["reason"])

    def test_what_the_programs_own_collection_freed_is_still_device_memory_it_kept(self):
        # GIVEN the same cycle, which the script collects itself after the step, THEN the witnesses
        # read on either side of that collection's freeing see the 16 and 24 MiB go: FAIL, though
        # leakgate's own collection frees nothing more.
        script = os.path.join(HERE, "..", "..", "fixtures", "cuda", "scan_warp_and_jax_pools_in_a_frame_cycle.py")
        code, report = scan(script, "collects", LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        check = checks_of(report)["device-memory"]
        self.assertEqual((code, check["status"]), (1, "fail"), check)
        self.assertIn("freed only by a collection (the program's own, or leakgate's)", check["reason"])
        self.assertIn("JAX's GPU allocator: 0 B after return, 0 B after collection, 24.0 MiB (25165824 bytes) "
                      "freed by the program's own collections", check["reason"])
        details = report["results"][0]["details"]["device_memory"]
        self.assertEqual(details["warp_pool_used_freed_by_program_collections"], 16 << 20)
        self.assertEqual(details["freed_by_collection"], 24 << 20)

    def test_without_a_driver_the_host_sentinel_is_judged_and_cuda_is_not_started(self):
        code, report = scan(SCAN_SCRIPT, LEAKGATE_LIBCUDA="/nonexistent/libcuda.so.1")
        self.assertEqual(code, 1)
        checks = checks_of(report)
        self.assertEqual(checks["device-memory"]["status"], "skip")
        self.assertIn("the program did not use CUDA and placed no device sentinel", checks["device-memory"]["reason"])
        self.assertEqual([s["label"] for s in report["results"][0]["sentinels"]], ["host buffer"])
        self.assertNotIn("device memory", checks["frame-cycle"]["reason"])

    def test_a_script_without_sentinels_has_no_sentinel_checks(self):
        script = os.path.join(HERE, "..", "..", "fixtures", "scan", "leak_exception_kept_in_local.py")
        _, report = scan(script, LEAKGATE_LIBCUDA=FAKE_LIBCUDA)
        self.assertEqual(sorted(checks_of(report)), ["cyclic-garbage", "frame-cycle", "held-growth", "retained-frame"])


if __name__ == "__main__":
    args = sys.argv[1:]
    LEAKGATE = os.path.abspath(args[args.index("--leakgate") + 1])
    FAKE_LIBCUDA = os.path.abspath(args[args.index("--fake-libcuda") + 1])
    if not os.path.exists(LEAKGATE) or not os.path.exists(FAKE_LIBCUDA):
        print("skip: leakgate or the fake driver is not built", file=sys.stderr)
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v"])
