#!/usr/bin/env bash
# The built wheel on a bare system: a fresh Debian bookworm root holding only python3 and
# python3-venv (debootstrap --variant=minbase from Debian's packages; no compiler, no -dev package,
# no libpython3.11.so) installs it with pip and runs it.
#
#   tests/package/bare_root.sh WHEEL          (as root: debootstrap, chroot, mount, unshare)
#
# What it proves, in a scratch copy of that root (chroot, a venv /v of the root's python3):
#   - `pip install WHEEL` works (timed: "install took N s"), then `pip install pytest` from PyPI;
#   - `import leakgate_dsl` and `leakgate-dsl --help` work, and no ELF file of the installed
#     package needs a library the root lacks (ldd);
#   - `leakgate-dsl gate` (no target: the bundled model of the 4.6.1 frame-cycle incident) exits 1
#     with `FAIL  decorate-frame-cycle` naming `cur_frame` of `ModelDSL.kernel`;
#   - `leakgate-dsl scan -- leak.py` (a decorator's frame names itself under gc.disable() and pins
#     its caller's 16 MiB bytearray) exits 1 with `FAIL  frame-cycle`, the culprit and >= 16 MiB;
#     `scan -- clean.py` (the same, fixed) exits 0;
#   - `pytest --leakgate` on a file with a leaking and a clean test: exit 1, the leaking test
#     failed naming its culprit, the clean one passed.
# Any unmet expectation makes the exit status 1 (2: usage or set-up error). The outputs of the last
# run stay in .cache/bare-bookworm/last-run/.
#
# How long (measured on this project's 2-core machine, Debian's mirror through the network's
# proxy, with stand-in wheels, as no real wheel had been built yet):
#   - once: debootstrap 33 to 71 s (three runs: 33, 71, 42 s); the cached root, .cache/bare-bookworm/root, is 231 MB
#     (118 packages; the downloaded .debs are dropped);
#   - each run, before the checks, about 5 s: copying the root 0.2 to 2.5 s, the venv 2 s, the
#     install of a small wheel 0.3 s, pytest from PyPI 2 s. The checks' own time is the real
#     wheel's: the gate runs its defaults (every workload, a 30 s soak of the target and another
#     of the reference); the scans and pytest take seconds.
#
# How: the cached root is made once in a temporary directory beside it and renamed into place only
# when debootstrap succeeded and the root passed the checks (python3, python3-venv; no gcc, g++,
# cc, c++, cpp, clang; no *-dev package), so a half-made root is never used; the checks are made
# again on each run's copy. Each run works in its own copy (.cache/bare-bookworm/run.XXXXXX), never
# in the cached root. Everything that runs in the copy runs in a mount and PID namespace of its own
# (unshare): a /proc of that namespace's own, and /dev bound with /dev/pts and /dev/shm, are
# mounted there only, so nothing can propagate to this machine's mounts, and when the run ends the
# namespace ends with every process left in it. The EXIT trap still checks (findmnt) that nothing
# is mounted under the copy, unmounting what is (lazily as a last resort), and that no process has
# its root there, before removing the copy.
# Runs take a lock (.cache/bare-bookworm/lock): a second run waits for the first.
#
# The network: /etc/resolv.conf is copied into the copy so pip resolves PyPI. Where this machine's
# pip trusts a CA of its own (PIP_CERT, or `cert` in /etc/pip.conf: a TLS-intercepting proxy), that
# bundle is handed to pip in the root, with the proxy variables; it only lets pip reach PyPI.
# The mirror is the one this machine's apt uses for bookworm (only Debian's mirrors are reachable);
# BARE_ROOT_MIRROR overrides it.
set -euo pipefail

die() { echo "bare_root.sh: $*" >&2; exit 2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

[ $# -eq 1 ] || die "usage: tests/package/bare_root.sh WHEEL"
wheel=$(realpath -e "$1" 2>/dev/null) || die "no such wheel: $1"
case "$(basename "$wheel")" in leakgate_dsl-*.whl) ;; *) die "not a leakgate_dsl wheel: $wheel" ;; esac
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount, unshare)"
for tool in chroot unshare findmnt flock realpath; do
    command -v "$tool" >/dev/null || die "needs $tool"
done

repo=$(cd "$(dirname "$0")/../.." && pwd -P)  # physical: compared with /proc/PID/root
cache=$repo/.cache/bare-bookworm
base=$cache/root
mkdir -p "$cache"
exec 9>"$cache/lock"
flock -w 3600 9 || die "another run holds $cache/lock"
started=$(now)

# --- what is mounted under a directory, and its removal -------------------------------------------
mounts_under() {  # the mount points at or under $1, deepest first
    findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1' | sort -r
}
processes_in() {  # the processes whose root directory is $1
    local link pid
    for link in /proc/[0-9]*/root; do
        pid=${link#/proc/}; pid=${pid%/root}
        [ "$(readlink "$link" 2>/dev/null)" = "$1" ] && echo "$pid"
    done
    return 0
}
remove_tree() {  # remove a scratch tree: first end its processes and unmount what is under it
    local dir=$1 pid target left
    [ -e "$dir" ] || return 0
    for pid in $(processes_in "$dir"); do
        echo "bare_root.sh: process $pid still runs in $dir: killed" >&2
        kill -KILL "$pid" 2>/dev/null || true
    done
    for target in $(mounts_under "$dir"); do
        umount "$target" 2>/dev/null || umount -l "$target" || true
    done
    left=$(mounts_under "$dir")
    if [ -n "$left" ]; then
        echo "bare_root.sh: still mounted under $dir, left in place: $left" >&2
        return 1
    fi
    rm -rf --one-file-system "$dir"
}

# A run killed outright (SIGKILL) leaves its copy behind: removed here, under the lock.
for stale in "$cache"/run.* "$cache"/root.tmp.*; do
    [ -e "$stale" ] || continue
    echo "=== removing a stale $(basename "$stale")"
    remove_tree "$stale" || die "cannot remove $stale"
done

scratch=
inner=  # the background `unshare` while it runs
cleanup() {
    local status=$?
    trap - EXIT INT TERM HUP
    if [ -n "$inner" ] && kill -0 "$inner" 2>/dev/null; then
        kill -KILL "$inner" 2>/dev/null
        wait "$inner" 2>/dev/null
    fi
    if [ -n "$scratch" ]; then
        if ! remove_tree "$scratch"; then
            echo "bare_root.sh: could not clean up $scratch" >&2
            status=1
        elif [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
            echo "bare_root.sh: stopped (exit $status); $scratch removed" >&2
        fi
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

unshare --mount --pid --fork --propagation private true 2>/dev/null \
    || die "unshare --mount --pid cannot run here (a container without CAP_SYS_ADMIN?)"

# --- the root's checks: python3 and python3-venv, no compiler, no -dev package -----------------------
check_root() {  # $1: a root; fails loudly on what it must not hold; sets root_python, root_packages
    local dir=$1 bad package
    for package in python3 python3-venv; do
        chroot "$dir" dpkg-query -W -f '${db:Status-Status}\n' "$package" 2>/dev/null | grep -qx installed \
            || { echo "bare_root.sh: $package is not installed in $dir" >&2; return 1; }
    done
    bad=$(chroot "$dir" /bin/sh -c 'for c in gcc g++ cc c++ cpp clang clang++ tcc; do command -v "$c"; done' || true)
    if [ -n "$bad" ]; then
        echo "bare_root.sh: the root is not bare, it has a compiler: $bad" >&2; return 1
    fi
    bad=$(chroot "$dir" dpkg-query -W -f '${Package}\n' | grep -E -- '-dev$' || true)
    if [ -n "$bad" ]; then
        echo "bare_root.sh: the root is not bare, it has -dev packages:" $bad >&2; return 1
    fi
    root_packages=$(chroot "$dir" dpkg-query -W -f '${Package}\n' | wc -l)
    root_python=$(chroot "$dir" /usr/bin/python3 -S -B -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
}

# --- the cached root, made once ----------------------------------------------------------------------
host_mirror() {  # the URI this machine's apt uses for bookworm's main archive
    local uri
    uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
          awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/) i++; if ($i ~ /^\[/ || $i ~ /\]$/) i++;
                              if ($(i + 1) == "bookworm") { print $i; exit } }')
    if [ -z "$uri" ]; then  # deb822: a stanza whose Suites name bookworm itself
        uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
            /^[ \t]*$/ { if (suites && u) { print u; exit } u = ""; suites = 0; next }
            /^URIs:/ { u = $2 }
            /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") suites = 1 }
            END { if (suites && u) print u }' | head -n 1)
    fi
    echo "${uri:-http://deb.debian.org/debian}"
}

if [ -d "$base" ]; then
    echo "=== bare root: $base (cached)"
else
    command -v debootstrap >/dev/null || {
        echo "=== installing debootstrap"
        apt-get install -y -q debootstrap >/dev/null || die "apt-get install debootstrap failed"
    }
    mirror=${BARE_ROOT_MIRROR:-$(host_mirror)}
    building=$(mktemp -d "$cache/root.tmp.XXXXXX")
    chmod 755 "$building"  # a root directory's mode, not mktemp's 0700
    scratch=$building  # removed by the trap if anything below fails
    echo "=== debootstrap bookworm from $mirror into $building"
    t=$(now)
    # In a mount and PID namespace of its own: the /proc and /sys debootstrap mounts in the root
    # cannot outlive it, even when it is killed.
    if ! unshare --mount --pid --fork --kill-child --propagation private \
            debootstrap --variant=minbase --include=python3,python3-venv \
            bookworm "$building" "$mirror" >"$cache/debootstrap.log" 2>&1 9>&-; then
        tail -n 20 "$cache/debootstrap.log" >&2
        die "debootstrap failed (the whole log: $cache/debootstrap.log)"
    fi
    rm -f "$building"/var/cache/apt/archives/*.deb
    check_root "$building" || die "the root debootstrap made is not the bare root this test needs"
    mv "$building" "$base"
    scratch=
    echo "=== debootstrap took $(since "$t") s; the root: $(du -sh "$base" | cut -f1)"
fi

# --- this run's copy ---------------------------------------------------------------------------------
scratch=$(mktemp -d "$cache/run.XXXXXX")
chmod 755 "$scratch"
t=$(now)
cp -a --reflink=auto "$base/." "$scratch/"
copy_s=$(since "$t")
check_root "$scratch" || die "the cached root $base is not bare any more: remove it and run again"
echo "=== the copy: $scratch (${copy_s} s); python3 $root_python, $root_packages packages, no compiler, no -dev package"

cp /etc/resolv.conf "$scratch/etc/resolv.conf"
work=$scratch/bare-root-test  # in the root: /bare-root-test
mkdir -p "$work/wheel" "$work/out" "$work/project"
cp "$wheel" "$work/wheel/"
pip_env=()
host_cert=${PIP_CERT:-$(sed -n 's/^[ \t]*cert[ \t]*=[ \t]*//p' /etc/pip.conf 2>/dev/null | head -n 1)}
if [ -n "$host_cert" ] && [ -f "$host_cert" ]; then
    cp "$host_cert" "$work/host-ca.crt"
    pip_env+=(PIP_CERT=/bare-root-test/host-ca.crt)
fi
for name in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY PIP_INDEX_URL PIP_EXTRA_INDEX_URL \
            PIP_TRUSTED_HOST PIP_DEFAULT_TIMEOUT; do
    [ -n "${!name:-}" ] && pip_env+=("$name=${!name}")
done

# A script with the 4.6.1 shape: the decorator's frame names itself, a cycle only the collector
# frees, and through f_back it pins build_model's 16 MiB of weights.
cat >"$work/project/leak.py" <<'EOF'
import gc
import sys

gc.disable()


def kernel(func):
    cur_frame = sys._getframe()  # the defect: this frame, named by its own local
    func.defined_at = cur_frame.f_back.f_lineno
    return func


def build_model():
    weights = bytearray(16 * 1024 * 1024)

    @kernel
    def add():
        pass

    return len(weights)


print("model of", build_model(), "bytes")
EOF
# The same, fixed: the decorator reads its caller's line and keeps no frame.
sed -e 's/^    cur_frame = sys._getframe().*/    caller = sys._getframe(1)  # the fix: the caller'"'"'s frame, never its own/' \
    -e 's/cur_frame\.f_back\.f_lineno/caller.f_lineno/' "$work/project/leak.py" >"$work/project/clean.py"
cat >"$work/project/test_bare.py" <<'EOF'
import sys


def leaky_kernel(func):
    cur_frame = sys._getframe()  # the 4.6.1 defect: the decorator's frame names itself
    func.defined_at = cur_frame.f_back.f_lineno
    return func


def kernel(func):
    func.defined_at = sys._getframe(1).f_lineno  # fixed: no frame kept
    return func


def test_leaks():
    weights = bytearray(16 << 20)

    @leaky_kernel
    def add():
        pass


def test_clean():
    weights = bytearray(16 << 20)

    @kernel
    def add():
        pass
EOF

# What runs in the root, as a bare system's root user (env -i: nothing of this machine's
# environment but the network's settings for pip).
cat >"$work/inner.sh" <<'EOF'
set -uo pipefail
cd /bare-root-test/project
out=/bare-root-test/out
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
failed=0
results=()
note() { results+=("$1"); echo "$1"; }

# step NAME EXPECTED_EXIT VERDICT TIMEOUT COMMAND...: runs it (its stdout and stderr in
# $out/NAME.{out,err}); it passes on the expected exit with a line of its stdout matching VERDICT
# (an extended regex; empty: any), the program's own verdict, so a crash's exit 1 is no pass.
step() {
    local name=$1 expected=$2 verdict=$3 limit=$4 t rc
    shift 4
    t=$(now)
    timeout --kill-after=10 "$limit" "$@" >"$out/$name.out" 2>"$out/$name.err"
    rc=$?
    last_s=$(since "$t")
    if [ "$rc" -eq "$expected" ] && { [ -z "$verdict" ] || grep -E -q -- "$verdict" "$out/$name.out"; }; then
        note "  PASS  $name: exit $rc${verdict:+ with its verdict} (${last_s} s)"
        return 0
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        note "  FAIL  $name: ran past ${limit} s and was killed (expected exit $expected)"
    elif [ "$rc" -eq "$expected" ]; then
        note "  FAIL  $name: exit $rc as expected, but not its verdict (no line of its stdout matches /$verdict/): it did not run through"
    else
        note "  FAIL  $name: exit $rc, expected $expected (${last_s} s)"
    fi
    failed=1
    local loader
    # The dynamic loader's words (a program), dlopen's (an extension module's ImportError), and
    # leakgate-dsl's own when its extension module does not load.
    loader=$(grep -h -m 1 -E 'error while loading shared libraries|cannot open shared object file|does not load' \
             "$out/$name.out" "$out/$name.err" | head -n 1)
    if [ -n "$loader" ]; then
        note "        -> it cannot start in the bare root: $loader"
    fi
    echo "        --- the last lines of its stdout:"; tail -n 15 "$out/$name.out" | sed 's/^/        | /'
    echo "        --- the last lines of its stderr:"; tail -n 15 "$out/$name.err" | sed 's/^/        | /'
    return 1
}
# expect NAME FILE EXTENDED-REGEX WHAT: the output has a line that matches
expect() {
    if grep -E -q -- "$3" "$out/$1.$2"; then
        note "  PASS  $1: $4"
    else
        note "  FAIL  $1: $4 (no line of its $2 matches /$3/)"
        failed=1
    fi
}

t=$(now)
python3 -m venv /v || { echo "FAIL: python3 -m venv /v"; exit 1; }
echo "=== venv /v ($(/v/bin/python --version)): $(since "$t") s"
wheel=$(ls /bare-root-test/wheel/*.whl)
t=$(now)
if ! /v/bin/pip install --disable-pip-version-check "$wheel" >"$out/install.out" 2>&1; then
    cat "$out/install.out"
    echo "FAIL: pip install $(basename "$wheel") failed in the bare root (python3 $(python3 -c 'import sys; print(sys.version.split()[0])'); the wheel must be for that CPython and linux_x86_64)"
    exit 1
fi
echo "=== install took $(since "$t") s: $(grep -m 1 '^Successfully installed' "$out/install.out")"
t=$(now)
/v/bin/pip install -q --disable-pip-version-check pytest >"$out/pytest-install.out" 2>&1 \
    || { cat "$out/pytest-install.out"; echo "FAIL: pip install pytest (PyPI) failed"; exit 1; }
echo "=== pytest $(/v/bin/python -c 'import pytest; print(pytest.__version__)') from PyPI: $(since "$t") s"
export PATH=/v/bin:$PATH

echo "=== the checks"
step import 0 '' 120 python -c 'import leakgate_dsl; print(leakgate_dsl.__version__, leakgate_dsl.__file__)' \
    && echo "        leakgate_dsl $(cut -d' ' -f1 "$out/import.out")"
package=$(python -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("leakgate_dsl").origin))')
missing=$(find "$package" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec sh -c \
    'for f; do head -c 4 "$f" | grep -q ELF && ldd "$f" 2>&1 | sed -n "s|^[[:space:]]*\([^ ]*\) => not found|\1 (needed by ${f#$0/})|p"; done' \
    "$package" {} +)
if [ -z "$missing" ]; then
    note "  PASS  libraries: every ELF file of the package finds the libraries it needs (ldd)"
else
    note "  FAIL  libraries: not in the bare root: $(echo $missing)"
    failed=1
fi

cli=yes
step help 0 '' 120 leakgate-dsl --help || cli=
if [ -z "$cli" ]; then
    note "  FAIL  gate, scan-leak, scan-clean: not run, leakgate-dsl cannot start"
else
    # (1) the gate, no target: the bundled model of the 4.6.1 frame-cycle incident.
    if step gate 1 '^[0-9]+ findings?; exit 1$' 1200 leakgate-dsl gate; then
        expect gate out '^ +FAIL +decorate-frame-cycle ' 'the failing check decorate-frame-cycle is named'
        expect gate out 'cur_frame.*ModelDSL\.kernel|ModelDSL\.kernel.*cur_frame' 'the culprit: cur_frame of ModelDSL.kernel'
    fi
    grep -E '^ +FAIL ' "$out/gate.out" | cut -c1-150 | sed 's/^/        /'

    # (2) scan: the leaking script exits 1 naming the cycle and its 16 MiB; the fixed one exits 0.
    if step scan-leak 1 '^[0-9]+ findings?; exit 1$' 600 leakgate-dsl scan -- leak.py; then
        expect scan-leak out '^ +FAIL +frame-cycle ' 'FAIL frame-cycle'
        expect scan-leak out 'local `cur_frame` of `kernel`' 'the culprit: local cur_frame of kernel'
        bytes=$(sed -n 's/^ *FAIL  *frame-cycle .*(\([0-9]*\) bytes) in all.*/\1/p' "$out/scan-leak.out")
        if [ -n "$bytes" ] && [ "$bytes" -ge 16777216 ]; then
            note "  PASS  scan-leak: the cycle pins $bytes bytes (>= the 16 MiB bytearray)"
        else
            note "  FAIL  scan-leak: the cycle should pin >= 16777216 bytes (read: '${bytes}')"
            failed=1
        fi
    fi
    if step scan-clean 0 '^0 findings; exit 0$' 600 leakgate-dsl scan -- clean.py; then
        expect scan-clean out '^ +PASS +frame-cycle ' 'PASS frame-cycle'
    fi
fi

# (3) pytest --leakgate: the leaking test fails on leakgate's limits, the clean one passes.
if step pytest 1 ' 1 failed, 1 passed in ' 600 pytest -p no:cacheprovider -rA --leakgate test_bare.py; then
    expect pytest out '^FAILED test_bare\.py::test_leaks' 'test_leaks failed'
    expect pytest out '^PASSED test_bare\.py::test_clean' 'test_clean passed'
    expect pytest out "2 measured tests: 1 clean, 1 failed on leakgate's limits" "the plugin's summary: 1 clean, 1 failed"
    expect pytest out 'leaky_kernel' 'the culprit leaky_kernel is named'
fi

printf '%s\n' "${results[@]}" >"$out/summary"
exit "$failed"
EOF

echo "=== in the root: $(basename "$wheel")"
# In the background, so that a signal to this script is handled now (bash runs a trap only once
# its foreground command ended): the trap kills `unshare` (it ignores SIGTERM), and its
# --kill-child then kills the namespace's first process, which ends every process in it.
set +e
unshare --mount --pid --fork --kill-child --propagation private /bin/bash -c '
    set -e
    root=$1; shift
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    [ -e "$root/dev/pts/ptmx" ] || mount -t devpts -o newinstance devpts "$root/dev/pts"
    chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@" /bin/bash /bare-root-test/inner.sh
' unshare "$scratch" "${pip_env[@]}" 9>&- &
inner=$!
wait "$inner"
status=$?
inner=
set -e
rm -rf "$cache/last-run"
cp -a "$work/out" "$cache/last-run" 2>/dev/null || true

echo
if [ -f "$work/out/summary" ]; then
    passes=$(grep -c '^  PASS' "$work/out/summary" || true)
    fails=$(grep -c '^  FAIL' "$work/out/summary" || true)
    echo "=== summary: $passes expectations met, $fails not (outputs: $cache/last-run/)"
    grep -E '^  FAIL|^ +-> ' "$work/out/summary" || true
fi
if [ "$status" -eq 0 ]; then
    echo "=== OK: $(basename "$wheel") installs and works on a bare bookworm root ($(since "$started") s in all)"
    exit 0
fi
echo "=== FAILED: $(basename "$wheel") on a bare bookworm root (exit $status, $(since "$started") s in all)"
exit 1
