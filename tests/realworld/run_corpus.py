#!/usr/bin/env python3
"""Run leakgate against the realworld corpus and check it against a plain-Python oracle.

usage: run_corpus.py --leakgate PATH [--python PY] [--table] [--jobs N] [--json FILE]
                     [--oracle-only] [CASE ...]

Each case in cases/*.py is a driver script for a real, fixed retention bug in a PyPI package:
a frame or traceback in a reference cycle (kind `frame-cycle`, the default), or a cycle without a
frame made again and again (kind `cyclic-garbage`), or a container a library holds that grows with
every call (kind `held-growth`: a cache that never evicts); its header names the package, the leaking and
the fixed release, the Pythons on which the leaking release forms the cycle, the culprit (the
function the upstream fix changed) and, for the second sort, `# kind: cyclic-garbage`.
For each case that applies to PY's version and each of the two releases: install the release
(cached in $LEAKGATE_CACHE_DIR/realworld/<major.minor>/<pkg>-<ver>/, by default
~/.cache/leakgate/realworld/...), run the oracle (oracle.py:
runpy under gc.disable(), then one DEBUG_SAVEALL collection: frames in gc.garbage, and the shapes
of the cycles without a frame, their instances and the bytes they pin), then `leakgate scan
--json` (with --trace-sites for a cyclic-garbage case). Both run on an isolated interpreter (a venv of PY without its
site-packages, cached beside the releases), so packages installed in PY do not leak into a case.
For a frame-cycle or cyclic-garbage case, `leakgate repro` then writes the reproducer of the leaking
release's first finding (the driver cut down by `--reduce` to the statements the finding needs on
the leaking release, carried in plain Python), which must exit 1 with the leaking release on the
path and 0 with the fixed one.

Exit status: 0 when every case run has its leaking release judged leaking by both the oracle and
leakgate and its fixed release clean by both, and every reproducer exits as it must; 1 otherwise (the reasons are printed); 77 when no
case applies to this Python, when the leakgate build embeds another Python than PY (unless
--oracle-only), or when PyPI cannot be reached and a release is not cached. A
culprit mismatch is shown (the table's `match` column) but does not fail the run.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")
ORACLE = os.path.join(HERE, "oracle.py")
CACHE = os.environ.get("LEAKGATE_REALWORLD_CACHE") or os.path.join(
    os.environ.get("LEAKGATE_CACHE_DIR")
    or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "leakgate"),
    "realworld")
SKIP = 77
HEADER = re.compile(r"^#\s*(package|leaking|fixed|python|culprit|extra|kind):\s*(.+?)\s*$")
KINDS = ("frame-cycle", "cyclic-garbage", "held-growth")


class Case:
    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.fields = {"extra": []}
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                m = HEADER.match(line)
                if m:
                    key, value = m.group(1), m.group(2)
                    if key == "extra":
                        self.fields["extra"].extend(value.split())
                    else:
                        self.fields[key] = value
        missing = [k for k in ("package", "leaking", "fixed", "python", "culprit")
                   if k not in self.fields]
        if missing:
            raise SystemExit("%s: header lacks %s" % (path, ", ".join(missing)))
        self.package = self.fields["package"]
        self.leaking = self.fields["leaking"]
        self.fixed = self.fields["fixed"]
        self.culprit = self.fields["culprit"]
        self.extra = self.fields["extra"]
        # frame-cycle: leakgate's frame-cycle check must fail, the oracle find a frame in the
        # garbage; cyclic-garbage: a cycle without a frame, made once a call: leakgate's
        # cyclic-garbage (or frame-cycle) check must fail, the oracle find a shape over the limits
        self.kind = self.fields.get("kind", "frame-cycle")
        if self.kind not in KINDS:
            raise SystemExit("%s: kind %r is not one of %s" % (path, self.kind, ", ".join(KINDS)))

    def applies_to(self, version):
        """`# python: 3.11+` (3.11 and later), `3.12+`, or `3.11` (exactly), or a list `3.11 3.12`."""
        major_minor = tuple(version[:2])
        for item in self.fields["python"].replace(",", " ").split():
            plus = item.endswith("+")
            want = tuple(int(x) for x in item.rstrip("+").split(".")[:2])
            if major_minor == want or (plus and major_minor >= want):
                return True
        return False


def python_version(py):
    out = subprocess.run([py, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return tuple(int(x) for x in out.split("."))


def leakgate_python(leakgate):
    """The major.minor of the Python the leakgate build embeds (`leakgate --version`)."""
    out = subprocess.run([leakgate, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"\(Python (\d+\.\d+)", out)
    if not m:
        raise SystemExit("cannot read the Python version from `%s --version`: %r" % (leakgate, out))
    return m.group(1)


def python_from_leakgate(leakgate):
    mm = leakgate_python(leakgate)
    candidates = [shutil.which("python" + mm)]
    pyenv = os.path.expanduser("~/.pyenv/versions")
    if os.path.isdir(pyenv):
        for v in sorted(os.listdir(pyenv), reverse=True):
            if v.startswith(mm + "."):
                candidates.append(os.path.join(pyenv, v, "bin", "python3"))
    for c in candidates:
        if c and os.path.exists(c):
            return c
    raise SystemExit("no python%s found; pass --python" % mm)


def isolated_python(py, mm):
    """A venv of PY without its site-packages (cached), so only the release's folder is seen."""
    venv = os.path.join(CACHE, mm, "venv")
    vpy = os.path.join(venv, "bin", "python")
    if not os.path.exists(vpy):
        subprocess.run([py, "-m", "venv", "--without-pip", venv], check=True,
                       capture_output=True)
    return vpy


def install(py, mm, case, version):
    """Install case.package==version (plus the case's extras) into the cache; return (dir, error)."""
    target = os.path.join(CACHE, mm, "%s-%s" % (case.package, version))
    marker = os.path.join(target, ".ok")
    specs = ["%s==%s" % (case.package, version)] + case.extra
    if release_cached(target, specs):
        return target, None
    if os.path.isdir(target):
        shutil.rmtree(target)
    cmd = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--no-warn-script-location", "--target", target] + specs
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return None, "pip install %s==%s failed: %s" % (case.package, version, " | ".join(tail))
    with open(marker, "w") as fh:  # what was installed: a case whose extras change reinstalls
        fh.write("\n".join(specs) + "\n")
    return target, None


def release_cached(target, specs):
    marker = os.path.join(target, ".ok")
    if not os.path.exists(marker):
        return False
    with open(marker) as fh:
        written = fh.read().split()
    return not written or written == specs  # an empty marker: installed by hand, trusted


def pypi_reachable(py):
    with tempfile.TemporaryDirectory(prefix="leakgate-rw-pypi-") as scratch:
        try:
            proc = subprocess.run([py, "-m", "pip", "download", "--quiet", "--no-deps",
                                   "--disable-pip-version-check", "-d", scratch, "six==1.16.0"],
                                  capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return False
    return proc.returncode == 0


def run_oracle(vpy, target, driver, workdir, kind="frame-cycle"):
    out = os.path.join(workdir, "oracle.json")
    env = dict(os.environ, PYTHONPATH=target, PYTHONDONTWRITEBYTECODE="1")
    held = ["--held"] if kind == "held-growth" else []
    try:
        proc = subprocess.run([vpy, ORACLE] + held + [driver, out], env=env, capture_output=True,
                              text=True, timeout=180, cwd=os.path.dirname(driver))
    except subprocess.TimeoutExpired:
        return {"status": "error", "error": "oracle timed out", "leaking": False}
    if not os.path.exists(out):
        return {"status": "error", "error": "oracle crashed (rc %d): %s"
                % (proc.returncode, proc.stderr.strip()[-300:]), "leaking": False}
    with open(out) as fh:
        return json.load(fh)


def run_leakgate(leakgate, vpy, target, driver, workdir, kind="frame-cycle"):
    out = os.path.join(workdir, "leakgate.json")
    env = dict(os.environ, PYTHONPATH=target, PYTHONDONTWRITEBYTECODE="1")
    # --trace-sites: a cyclic-garbage finding then says where its cycles are made (fix_site)
    sites = ["--trace-sites"] if kind == "cyclic-garbage" else []
    cmd = [leakgate, "scan", "--json", out, "--python", vpy, "--quiet", "--no-color"] + sites + [
        "--", driver]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180,
                              cwd=os.path.dirname(driver))
    except subprocess.TimeoutExpired:
        return {"rc": None, "error": "leakgate timed out", "findings": []}
    result = {"rc": proc.returncode, "error": None, "findings": []}
    if os.path.exists(out):
        with open(out) as fh:
            data = json.load(fh)
        result["findings"] = data.get("findings", [])
        result["checks"] = data.get("checks", [])
        # a worker that died says why in its result (with --quiet, stderr is empty)
        died = ["%s%s" % (r["error"].get("message", ""),
                          (": " + r["error"]["stderr_tail"].strip()[-200:])
                          if r["error"].get("stderr_tail") else "")
                for r in data.get("results", []) if isinstance(r.get("error"), dict)]
        if died and proc.returncode not in (0, 1):
            result["error"] = "exit %d: %s" % (proc.returncode, "; ".join(died))
    else:
        result["error"] = "no JSON (rc %d): %s" % (proc.returncode, proc.stderr.strip()[-300:])
    if proc.returncode not in (0, 1):
        result["error"] = result["error"] or "exit %d: %s" % (
            proc.returncode, (proc.stderr or proc.stdout).strip()[-300:])
    return result


def culprit_matches(expected, found):
    """`Local._lock_storage` matches `asgiref.local.Local._lock_storage`: the shorter name's
    components are the last components of the longer."""
    if not found:
        return False
    a, b = expected.split("."), found.split(".")
    n = min(len(a), len(b))
    return a[-n:] == b[-n:]


def function_at(path, line):
    """The qualified name of the innermost function whose body holds `line` of the file at `path`
    (`serialize`, `ManagedResource._free_native_ptr`, `f.<locals>.g`), or "". A `def` line and
    its decorators belong to the enclosing function, which runs them."""
    import ast
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return ""
    best = ""

    def walk(node, prefix):
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                if child.body and child.body[0].lineno <= line <= child.end_lineno:
                    best = name
                    walk(child, name + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                if child.lineno <= line <= child.end_lineno:
                    walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return best


def named_culprit(finding):
    """The function a finding says to change: its fix site's (the function that binds the closing
    local; for a closure cell, the enclosing function that owns it), else its culprit frame's.
    A cyclic-garbage finding's fix site (under --trace-sites) is a file and line where its cycles
    are made, with no function: the function is read from the source there."""
    site = finding.get("fix_site") or {}
    if site.get("function"):
        return site["function"]
    if finding.get("kind") == "held-growth":
        return finding.get("root", "")
    if finding.get("kind") == "cyclic-garbage":
        if site.get("file") and site.get("line"):
            return function_at(site["file"], int(site["line"]))
        return ""
    return finding["frames"][0]["function"] if finding.get("frames") else ""


def judge_leakgate(lg, kind="frame-cycle"):
    """leaking: exit 1 with a finding of the case's kind (for a cyclic-garbage case, a
    cyclic-garbage or a frame-cycle finding); clean: exit 0."""
    wanted = {"cyclic-garbage": ("cyclic-garbage", "frame-cycle"),
              "held-growth": ("held-growth",)}.get(kind, ("frame-cycle",))
    cycles = [f for f in lg["findings"] if f.get("kind") in wanted]
    if lg["error"]:
        verdict = "error"
    elif lg["rc"] == 1 and cycles:
        verdict = "leaking"
    elif lg["rc"] == 0:
        verdict = "clean"
    else:  # exit 1 with findings of other kinds only (retained-frame)
        verdict = "other"
    return verdict, cycles


def write_reproducer(leakgate, vpy, target, driver, workdir):
    """`leakgate repro --reduce` of the scan's first finding: the driver cut down to the statements
    the finding needs on the leaking release (each cut run with the release on the path) and
    carried in the reproducer (its kScanScript shape): the reproducer's text, or an error."""
    out = os.path.join(workdir, "repro.py")
    cmd = [leakgate, "repro", "--from", os.path.join(workdir, "leakgate.json"), "--out", out, "--quiet",
           "--reduce", "--reduce-seconds", "120", "--expect-leak", vpy, "--", driver]
    env = dict(os.environ, PYTHONPATH=target, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=400, cwd=os.path.dirname(driver),
                          env=env)
    if proc.returncode != 0 or not os.path.exists(out):
        return {"error": "repro exit %d: %s" % (proc.returncode, (proc.stderr or proc.stdout).strip()[-300:])}
    with open(out) as fh:
        return {"script": fh.read()}


def run_reproducer(vpy, target, script):
    """The reproducer with the release on the path: its exit (1 reproduces, 0 clean) and last line."""
    with tempfile.TemporaryDirectory(prefix="leakgate-rw-repro-") as scratch:
        path = os.path.join(scratch, "repro.py")
        with open(path, "w") as fh:
            fh.write(script)
        env = dict(os.environ, PYTHONPATH=target, PYTHONDONTWRITEBYTECODE="1")
        try:
            proc = subprocess.run([vpy, path], env=env, capture_output=True, text=True, timeout=180,
                                  cwd=scratch)
        except subprocess.TimeoutExpired:
            return None, "timed out"
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return proc.returncode, lines[-1] if lines else ""


def run_release(leakgate, py, vpy, mm, case, version):
    target, err = install(py, mm, case, version)
    row = {"version": version, "install_error": err}
    if err:
        return row
    workdir = tempfile.mkdtemp(prefix="leakgate-rw-%s-" % case.name)
    try:
        row["oracle"] = run_oracle(vpy, target, case.path, workdir, case.kind)
        if leakgate:
            row["leakgate"] = run_leakgate(leakgate, vpy, target, case.path, workdir, case.kind)
            # The leaking release's finding, written up as a reproducer that re-runs the driver.
            if (version == case.leaking and case.kind in ("frame-cycle", "cyclic-garbage")
                    and row["leakgate"]["rc"] == 1):
                row["repro"] = write_reproducer(leakgate, vpy, target, case.path, workdir)
        else:  # --oracle-only
            row["leakgate"] = {"rc": None, "error": None, "findings": [], "checks": [],
                               "skipped": True}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return row


def oracle_verdict(o, kind="frame-cycle"):
    """frame-cycle: leaking when a frame is in the garbage. cyclic-garbage: leaking when a shape
    of cycle without a frame is over the limits (100 instances, 1 MiB), or a frame is in the
    garbage."""
    if o.get("status") != "ok":
        return "error"
    if kind == "cyclic-garbage":
        return "leaking" if o.get("cycle_leaking") or o.get("leaking") else "clean"
    if kind == "held-growth":
        return "leaking" if o.get("held_leaking") else "clean"
    return "leaking" if o.get("leaking") else "clean"


def oracle_why(o, kind):
    if o.get("error"):
        return o["error"]
    frames = ", ".join(o.get("frames", [])[:4])
    if kind == "held-growth":
        w = o.get("held_worst") or {}
        return "largest lru_cache: %s, %s entries" % (w.get("cache", "-"), w.get("entries", 0))
    if kind == "cyclic-garbage":
        w = o.get("cycle_worst") or {}
        shape = "%d cycles of %s, %s" % (w.get("instances", 0), w.get("shape", "-"),
                                         mib(w.get("bytes", 0)))
        return "; ".join(x for x in (shape, frames) if x)
    return frames


def summarize(case, rows):
    """Per case: verdicts, culprit, locals, bytes; and the reasons it fails, if it does."""
    s = {"case": case.name, "package": case.package, "leaking_version": case.leaking,
         "fixed_version": case.fixed, "culprit": case.culprit, "kind": case.kind, "problems": []}
    for role, version in (("leaking", case.leaking), ("fixed", case.fixed)):
        row = rows[role]
        want = "leaking" if role == "leaking" else "clean"
        if row.get("install_error"):
            s[role] = {"oracle": "n/a", "leakgate": "n/a"}
            s["problems"].append("%s %s: %s" % (case.name, version, row["install_error"]))
            continue
        ov = oracle_verdict(row["oracle"], case.kind)
        if row["leakgate"].get("skipped"):
            lv, cycles = "n/a", []
        else:
            lv, cycles = judge_leakgate(row["leakgate"], case.kind)
        s[role] = {"oracle": ov, "leakgate": lv, "cycles": cycles, "oracle_raw": row["oracle"],
                   "leakgate_raw": row["leakgate"]}
        if ov != want:
            extra = oracle_why(row["oracle"], case.kind)
            s["problems"].append("%s %s %s: oracle says %s, want %s (%s)"
                                 % (case.name, role, version, ov, want, extra))
        if lv != want and lv != "n/a":
            lg = row["leakgate"]
            why = lg["error"] or "; ".join(f.get("summary", f.get("kind", "?"))
                                           for f in lg["findings"][:3])
            s["problems"].append("%s %s %s: leakgate says %s (exit %s), want %s (%s)"
                                 % (case.name, role, version, lv, lg["rc"], want, why))
    leak = s.get("leaking", {})
    cycles = leak.get("cycles") or []
    found = named_culprit(cycles[0]) if cycles else ""
    s["oracle_only"] = (leak.get("leakgate") == "n/a")
    s["found"] = found
    s["match"] = culprit_matches(case.culprit, found)
    s["match_other"] = [i for i, f in enumerate(cycles) if i and culprit_matches(case.culprit, named_culprit(f))]
    s["locals"] = ", ".join(cycles[0].get("locals") or []) if cycles else ""
    check = "frame-cycle"
    if case.kind == "cyclic-garbage" and cycles and cycles[0].get("kind") == "cyclic-garbage":
        check = "cyclic-garbage"
        # no local closes such a cycle: the column shows the shape (the types in the cycle)
        shapes = cycles[0].get("cycle_shapes") or [{}]
        s["locals"] = "cycle of [%s]" % shapes[0].get("types", "?")
        s["lg_instances"] = int(shapes[0].get("count") or 0)
    if case.kind == "held-growth" and cycles:
        check = "held-growth"
        s["locals"] = "%s entries" % cycles[0].get("objects", 0)
    # The check's amount is the bytes of all its findings together (findings can pin the same
    # objects, so their `bytes` do not add up); for cyclic-garbage, the bytes of the worst shape.
    amounts = [c.get("amount") for c in (leak.get("leakgate_raw") or {}).get("checks", [])
               if c.get("name") == check and c.get("amount") is not None]
    s["lg_bytes"] = int(amounts[0]) if amounts else max(
        [int(f.get("bytes") or 0) for f in cycles] or [0])
    oracle = leak.get("oracle_raw") or {}
    if case.kind == "held-growth":
        s["oracle_bytes"] = int((oracle.get("held_worst") or {}).get("bytes") or 0)
    elif case.kind == "cyclic-garbage":
        worst = oracle.get("cycle_worst") or {}
        s["oracle_bytes"] = int(worst.get("bytes") or 0)
        s["oracle_instances"] = int(worst.get("instances") or 0)
    else:
        s["oracle_bytes"] = int(oracle.get("bytes") or 0)
    s["n_cycles"] = len(cycles)
    return s


def mib(n):
    return "%.2f MiB" % (n / 1048576.0)


def print_table(summaries):
    print("| case | package | leaking→fixed | leaking: oracle/leakgate | fixed: oracle/leakgate "
          "| culprit expected | culprit found | match | closing local (frame-cycle) or cycle shape "
          "| bytes (leakgate vs oracle) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in summaries:
        lk, fx = s.get("leaking", {}), s.get("fixed", {})
        match = "yes" if s["match"] else "no"
        if s["oracle_only"]:
            match = "n/a"
        if not s["match"] and s["match_other"]:
            match = "no (finding %s of %d)" % (",".join(str(i + 1) for i in s["match_other"]),
                                              s["n_cycles"])
        print("| %s | %s | %s→%s | %s/%s | %s/%s | `%s` | `%s` | %s | %s | %s |" % (
            s["case"], s["package"], s["leaking_version"], s["fixed_version"],
            lk.get("oracle", "?"), lk.get("leakgate", "?"),
            fx.get("oracle", "?"), fx.get("leakgate", "?"),
            s["culprit"], s["found"] or "-", match,
            ("`%s`" % s["locals"]) if s["locals"] else "-", bytes_cell(s)))


def bytes_cell(s):
    lg = "n/a" if s["oracle_only"] else mib(s["lg_bytes"])
    text = "%s vs %s" % (lg, mib(s["oracle_bytes"]))
    if s.get("kind") == "cyclic-garbage":  # and the instances of the worst shape
        text += " (%s vs %d cycles)" % ("n/a" if s["oracle_only"] else s.get("lg_instances", 0),
                                        s.get("oracle_instances", 0))
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--leakgate", required=True, help="path to the leakgate binary")
    ap.add_argument("--python", help="the interpreter (default: the one leakgate embeds)")
    ap.add_argument("--table", action="store_true", help="print a Markdown table")
    ap.add_argument("--jobs", "-j", type=int, default=2,
                    help="releases run at the same time (default 2)")
    ap.add_argument("--json", help="write the per-case summaries here")
    ap.add_argument("--oracle-only", action="store_true",
                    help="run the oracle only (no leakgate scan), e.g. to check drivers on a "
                         "Python that this leakgate build does not embed")
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    args = ap.parse_args()

    t0 = time.monotonic()
    leakgate = os.path.abspath(args.leakgate)
    if not os.access(leakgate, os.X_OK):
        print("leakgate not found or not executable: %s" % leakgate)
        return 1
    subprocess.run([leakgate, "--version"], check=False)
    py = args.python or python_from_leakgate(leakgate)
    version = python_version(py)
    mm = "%d.%d" % version[:2]
    embedded = leakgate_python(leakgate)
    if embedded != mm and not args.oracle_only:
        print("SKIP: this leakgate build embeds Python %s, and %s is Python %s (build leakgate "
              "for %s, or pass --oracle-only to check the drivers alone)"
              % (embedded, py, mm, mm))
        return SKIP

    paths = sorted(os.path.join(CASES_DIR, f) for f in os.listdir(CASES_DIR) if f.endswith(".py"))
    cases = [Case(p) for p in paths]
    if args.cases:
        known = {c.name for c in cases}
        unknown = [n for n in args.cases if n not in known]
        if unknown:
            print("unknown case(s): %s" % ", ".join(unknown))
            return 1
        cases = [c for c in cases if c.name in args.cases]
    applicable = [c for c in cases if c.applies_to(version)]
    for c in cases:
        if c not in applicable:
            print("skip %s: for Python %s, this is %s" % (c.name, c.fields["python"], mm))
    if not applicable:
        print("SKIP: no case applies to Python %s" % mm)
        return SKIP

    def cached(c, v):
        return release_cached(os.path.join(CACHE, mm, "%s-%s" % (c.package, v)),
                              ["%s==%s" % (c.package, v)] + c.extra)

    need = []
    for c in applicable:
        for v in (c.leaking, c.fixed):
            if not cached(c, v) and (c.package, v) not in {(n.package, w) for n, w in need}:
                need.append((c, v))
    if need and not pypi_reachable(py):
        print("SKIP: PyPI cannot be reached and %d release(s) are not cached (%s)"
              % (len(need), ", ".join("%s==%s" % (c.package, v) for c, v in need[:5])))
        return SKIP
    # Install first, one at a time (pip runs are heavy, and two cases may share a release).
    for c, v in need:
        t = time.monotonic()
        _, err = install(py, mm, c, v)
        print("install %s==%s: %s (%.1fs)" % (c.package, v, err or "ok", time.monotonic() - t))
    vpy = isolated_python(py, mm)

    print("running %d case(s) on Python %d.%d.%d (%s), leakgate %s"
          % (len(applicable), version[0], version[1], version[2], vpy, leakgate))
    jobs = [(c, role, v) for c in applicable for role, v in (("leaking", c.leaking),
                                                              ("fixed", c.fixed))]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        scanner = None if args.oracle_only else leakgate
        futs = {pool.submit(run_release, scanner, py, vpy, mm, c, v): (c, role)
                for c, role, v in jobs}
        for fut in concurrent.futures.as_completed(futs):
            c, role = futs[fut]
            results.setdefault(c.name, {})[role] = fut.result()

    summaries = [summarize(c, results[c.name]) for c in applicable]
    # Each reproducer `leakgate repro` wrote from a leaking release's scan must exit 1 with that
    # release on the path and 0 with the fixed one.
    repro_jobs = []
    for c in applicable:
        written = results[c.name].get("leaking", {}).get("repro")
        if not written:
            continue
        summary = next(s for s in summaries if s["case"] == c.name)
        if "error" in written:
            summary["problems"].append("%s: %s" % (c.name, written["error"]))
            continue
        for role, version, want in (("leaking", c.leaking, 1), ("fixed", c.fixed, 0)):
            target, err = install(py, mm, c, version)
            if not err:
                repro_jobs.append((c, summary, role, version, want, target, written["script"]))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_reproducer, vpy, job[5], job[6]): job for job in repro_jobs}
        for fut in concurrent.futures.as_completed(futs):
            c, summary, role, version, want, _, _ = futs[fut]
            rc, line = fut.result()
            summary.setdefault("repro", {})[role] = rc
            if rc != want:
                summary["problems"].append("%s: the reproducer leakgate repro wrote exits %s on %s %s, "
                                           "want %d (%s)" % (c.name, rc, role, version, want, line))
    reproduced = [s["case"] for s in summaries
                  if s.get("repro", {}).get("leaking") == 1 and s.get("repro", {}).get("fixed") == 0]
    if repro_jobs:
        print("repro: %d reproducer(s) exit 1 on the leaking release and 0 on the fixed one: %s"
              % (len(reproduced), ", ".join(reproduced)))
    problems = [p for s in summaries for p in s["problems"]]
    for s in summaries:
        lk, fx = s.get("leaking", {}), s.get("fixed", {})
        print("%-28s %s %s: oracle %s, leakgate %s | %s: oracle %s, leakgate %s | culprit %s (%s)"
              % (s["case"], s["package"], s["leaking_version"], lk.get("oracle"),
                 lk.get("leakgate"), s["fixed_version"], fx.get("oracle"), fx.get("leakgate"),
                 s["found"] or "-",
                 "oracle only" if s["oracle_only"] else "match" if s["match"]
                 else "MISMATCH, expected %s" % s["culprit"]))
    if args.table:
        print()
        print_table(summaries)
        print()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([{k: v for k, v in s.items() if k not in ("leaking", "fixed")}
                       | {"verdicts": {r: {k: s.get(r, {}).get(k) for k in ("oracle", "leakgate")}
                                       for r in ("leaking", "fixed")}} for s in summaries],
                      fh, indent=1)
    elapsed = time.monotonic() - t0
    if problems:
        print("FAIL: %d problem(s):" % len(problems))
        for p in problems:
            print("  " + p)
        print("time: %.1fs" % elapsed)
        return 1
    if args.oracle_only:
        print("PASS (oracle only): %d case(s)" % len(summaries))
    else:
        mism = [s["case"] for s in summaries if not s["match"]]
        print("PASS: %d case(s); culprit matched in %d/%d%s" % (
            len(summaries), len(summaries) - len(mism), len(summaries),
            (" (mismatch: %s)" % ", ".join(mism)) if mism else ""))
    print("time: %.1fs" % elapsed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
