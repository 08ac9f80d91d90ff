#!/usr/bin/env python3
"""The fault matrix: each file in cases/ is a fault, with what leakgate must do about it.

    run_faults.py --leakgate BUILD/leakgate [--table] [CASE ...]

A case is a Python file (the script or target the fault lives in) whose header says:
  # fault: what goes wrong            (required)
  # run: ARGS                         leakgate's arguments; {script} and {dir} are replaced (required)
  # exit: N                           the exit code (required)
  # name: FILE                        the file name to give the case (backslash escapes are bytes)
  # send: SIGNAL SECONDS              send SIGNAL to leakgate SECONDS after its start (may repeat)
  # text: WORDS                       in leakgate's stdout or stderr (may repeat)
  # text-absent: WORDS                not in them (may repeat)
  # absent: PATH                      must not exist afterwards (may repeat)
  # json: a.0.b                       with `--json -` appended, that key path exists in the report
  # json-file: PATH                   that file is a whole JSON report
  # env: NAME=VALUE                   in leakgate's environment; {dir} is replaced (may repeat)
  # python: >=3.12                    only where leakgate embeds that CPython or a later one (a
                                      defence CPython gives from that version on); skipped elsewhere
Each case runs in a temporary directory of its own, with a marker in its environment; afterwards
no process may carry the marker (every process leakgate or the fault started is gone). The runner
fails when any case does not behave; --table prints the matrix as Markdown.
"""

import argparse
import codecs
import concurrent.futures
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = {"fault", "run", "exit", "name", "send", "text", "text-absent", "absent", "json", "json-file", "python",
        "env"}


def read_case(path):
    case = {"file": os.path.basename(path), "text": [], "text-absent": [], "absent": [], "send": [], "env": []}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("# ") or ":" not in line:
                break
            key, _, value = line[2:].partition(":")
            key, value = key.strip(), value.strip()
            if key not in KEYS:
                raise SystemExit(f"{path}: unknown key {key!r}")
            if isinstance(case.get(key), list):
                case[key].append(value)
            else:
                case[key] = value
    for key in ("fault", "run", "exit"):
        if key not in case:
            raise SystemExit(f"{path}: no `# {key}:` line")
    return case


def survivors(marker):
    """Processes whose environment carries the marker."""
    found = []
    needle = f"LEAKGATE_FAULT_CASE={marker}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    with open(f"/proc/{pid}/cmdline", "rb") as c:
                        command = c.read().replace(b"\0", b" ").decode(errors="replace")
                    found.append(f"{pid}: {command}")
        except OSError:
            continue
    return found


def embedded_python(leakgate):
    """The CPython leakgate embeds, from `leakgate --version` ("leakgate 0.2.0 (Python 3.11)")."""
    said = subprocess.run([leakgate, "--version"], capture_output=True, text=True, timeout=60).stdout
    found = re.search(r"\(Python (\d+)\.(\d+)", said)
    if not found:
        raise SystemExit(f"cannot tell which CPython {leakgate} embeds: {said!r}")
    return int(found.group(1)), int(found.group(2))


def applies(case, version):
    wanted = case.get("python")
    if not wanted:
        return True
    if not wanted.startswith(">="):
        raise SystemExit(f"{case['file']}: `# python:` takes >=X.Y, not {wanted!r}")
    return version >= tuple(int(part) for part in wanted[2:].split("."))


def run_case(leakgate, path, version):
    case = read_case(path)
    problems = []
    if not applies(case, version):
        return case, None, [], 0.0, problems
    with tempfile.TemporaryDirectory(prefix="leakgate-fault-") as directory:
        name = codecs.escape_decode(case.get("name", case["file"]).encode())[0]
        script = os.path.join(os.fsencode(directory), name)
        with open(path, "rb") as source, open(script, "wb") as out:
            out.write(source.read())

        def expand(text):
            return os.fsencode(text).replace(b"{script}", script).replace(b"{dir}", os.fsencode(directory))

        args = [expand(arg) for arg in shlex.split(case["run"])]
        if "json" in case:
            args.insert(1, b"-")
            args.insert(1, b"--json")
        marker = uuid.uuid4().hex
        env = dict(os.environ, LEAKGATE_FAULT_CASE=marker)
        for setting in case["env"]:
            key, _, value = setting.partition("=")
            env[key] = os.fsdecode(expand(value))
        started = time.monotonic()
        process = subprocess.Popen([os.fsencode(leakgate), *args], cwd=directory, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        for signame, seconds in sorted((send.split() for send in case["send"]), key=lambda s: float(s[1])):
            time.sleep(max(0.0, started + float(seconds) - time.monotonic()))
            process.send_signal(getattr(signal, signame))
        try:
            stdout, stderr = process.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            problems.append("leakgate did not finish within 240 s")
        seconds = time.monotonic() - started
        text = (stdout + stderr).decode(errors="replace")
        if process.returncode != int(case["exit"]):
            problems.append(f"exit {process.returncode}, expected {case['exit']}")
        for words in case["text"]:
            if words not in text:
                problems.append(f"no {words!r} in the output")
        for words in case["text-absent"]:
            if words in text:
                problems.append(f"{words!r} in the output")
        for absent in case["absent"]:
            if os.path.lexists(expand(absent)):
                problems.append(f"{absent} exists")
        if "json" in case:
            try:
                node = json.loads(stdout)
                for key in case["json"].split("."):
                    node = node[int(key)] if key.isdigit() else node[key]
            except (ValueError, KeyError, IndexError, TypeError) as error:
                problems.append(f"report has no {case['json']} ({type(error).__name__})")
        if "json-file" in case:
            try:
                with open(expand(case["json-file"]), "rb") as f:
                    json.load(f)
            except (OSError, ValueError) as error:
                problems.append(f"{case['json-file']}: {error}")
        left = survivors(marker)
        for _ in range(20):  # a killed group takes a moment to be reaped by init
            if not left:
                break
            time.sleep(0.25)
            left = survivors(marker)
        if left:
            problems.append(f"{len(left)} process(es) survived: {left[:3]}")
            for line in left:
                try:
                    os.kill(int(line.split(":")[0]), signal.SIGKILL)
                except OSError:
                    pass
        files = sorted(f for f in os.listdir(os.fsencode(directory)) if f != name)  # what it left
    return case, process.returncode, files, seconds, problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--leakgate", required=True)
    parser.add_argument("--table", action="store_true")
    parser.add_argument("cases", nargs="*")
    options = parser.parse_args()
    if not os.path.exists(options.leakgate):
        print(f"skip: no leakgate binary at {options.leakgate}")
        return 77
    leakgate = os.path.abspath(options.leakgate)
    directory = os.path.join(HERE, "cases")
    paths = [os.path.join(directory, name) for name in (options.cases or sorted(os.listdir(directory)))
             if name.endswith(".py")]
    version = embedded_python(leakgate)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda path: run_case(leakgate, path, version), paths))
    failed = 0
    if options.table:
        print("| fault | exit | files left | verdict |")
        print("|---|---|---|---|")
    skipped = 0
    for case, code, files, seconds, problems in outcomes:
        if code is None:
            skipped += 1
            if not options.table:
                print(f"skip {case['file']}: needs CPython {case['python']}, leakgate embeds "
                      f"{version[0]}.{version[1]}")
            continue
        failed += bool(problems)
        verdict = "ok" if not problems else "WRONG: " + "; ".join(problems)
        if options.table:
            shown = ", ".join(str(f)[2:-1] for f in files)  # bytes, escaped as Python writes them
            print(f"| {case['fault']} | {code} | {shown or '-'} | {verdict} |")
        else:
            print(f"{'ok  ' if not problems else 'FAIL'} {case['file']} ({seconds:.1f} s): {case['fault']}"
                  + ("" if not problems else "\n     " + "\n     ".join(problems)))
    ran = len(outcomes) - skipped
    print(f"{ran - failed} of {ran} faults handled as expected"
          + (f" ({skipped} skipped: not for this CPython)" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
