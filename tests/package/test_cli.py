"""The CLI the wheel installs (`leakgate-dsl`, and `python -m leakgate_dsl`): the same binary as
build/leakgate, finding its data inside the installed package and running in this venv."""

import json
import os
import subprocess
import sys
import sysconfig

from conftest import FIXTURES, PACKAGE, SOURCE, KERNEL


def run(*args, cwd):
    command = os.path.join(sysconfig.get_path("scripts"), "leakgate-dsl")  # this venv's
    assert os.access(command, os.X_OK), command
    return subprocess.run([command, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_gate_on_the_bundled_model_finds_the_cycle(tmp_path):
    gate = run("gate", "--checks", "decorate,import", "--json", "report.json", cwd=tmp_path)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    # This venv's interpreter (python or python3: the console script's shebang names one of them).
    assert os.path.dirname(report["python"]["executable"]) == os.path.dirname(sys.executable), report["python"]
    checks = {c["name"]: c["status"] for c in report["checks"]}
    assert checks["decorate-frame-cycle"] == "fail" and checks["decorate-sentinels"] == "fail"
    cycles = [f for f in report["findings"] if f["kind"] == "frame-cycle"]
    culprits = {f["frames"][0]["function"] for f in cycles}
    for finding in cycles:  # the model came from the installed package, never the source tree
        file = finding["frames"][0]["file"]
        assert file.startswith(str(PACKAGE / "share/leakgate")) and not file.startswith(str(SOURCE) + os.sep), file
    assert KERNEL in culprits, culprits


def test_gate_on_the_reference_is_clean(tmp_path):
    gate = run("gate", "--target", "reference", "--checks", "decorate,import", cwd=tmp_path)
    assert gate.returncode == 0, gate.stdout + gate.stderr


def test_scan_names_the_culprit(tmp_path):
    scan = run("scan", str(FIXTURES / "scan/leak_dsl_decorator_self_frame.py"), cwd=tmp_path)
    assert scan.returncode == 1, scan.stdout + scan.stderr
    assert "frame-cycle:" in scan.stdout


def test_python_dash_m_is_the_same_cli(tmp_path):
    usage = subprocess.run([sys.executable, "-m", "leakgate_dsl", "--help"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 0 and "gate" in usage.stdout, usage.stderr
