#!/usr/bin/env python3
"""How bisect should make a release's venv from its wheelhouse: pip (what leakgate does) against
uv, with uv's own cache cold (its first install of those wheels) and warm (the files hard-linked
from its cache; and with the bytecode compiled, as pip does), taken round by round (A, B, C, A, B, C...: the machine's drift moves each round
alike) and printed as median and min-max, with the disk each venv takes.

    python3 bench/venv_bench.py --uv PATH/uv [--requirement nvidia-cutlass-dsl==4.6.1] [--rounds 5]

The wheelhouse is leakgate's ($LEAKGATE_CACHE_DIR/wheels, default ~/.cache/leakgate/wheels): run
one bisect of the release first so that every wheel is there. Nothing is downloaded: every install
is --no-index. uv is not a leakgate dependency; install it for the measurement (`pip install uv`).
Standard library only.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def cache_dir():
    if os.environ.get("LEAKGATE_CACHE_DIR"):
        return os.environ["LEAKGATE_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "leakgate")


def timed(commands):
    started = time.perf_counter()
    for command in commands:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - started


def disk_bytes(path):
    """Bytes of the files under path, a file with several links counted once per tree walk."""
    seen, total = set(), 0
    for root, _, files in os.walk(path):
        for name in files:
            stat = os.lstat(os.path.join(root, name))
            if (stat.st_dev, stat.st_ino) in seen:
                continue
            seen.add((stat.st_dev, stat.st_ino))
            total += stat.st_blocks * 512
    return total


def shared_bytes(path):
    """Bytes of the files under path that have another link (outside the venv: uv's cache)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            stat = os.lstat(os.path.join(root, name))
            if stat.st_nlink > 1:
                total += stat.st_blocks * 512
    return total


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uv", required=True, help="the uv executable")
    parser.add_argument("--python", default=sys.executable, help="the Python of the venvs")
    parser.add_argument("--requirement", default="nvidia-cutlass-dsl==4.6.1")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    wheels = os.path.join(cache_dir(), "wheels")
    scratch = tempfile.mkdtemp(prefix="leakgate-venv-bench-")
    warm_cache = os.path.join(scratch, "uv-cache-warm")
    try:
        def pip(venv):
            return [[args.python, "-m", "venv", "--without-pip", venv],
                    [args.python, "-m", "pip", "--python", os.path.join(venv, "bin", "python"),
                     "--disable-pip-version-check", "--no-input", "install", "--no-index",
                     "--find-links", wheels, args.requirement]]

        def uv(venv, cache, compile_=False):
            return [[args.uv, "venv", "--quiet", "--python", args.python, "--cache-dir", cache, venv],
                    [args.uv, "pip", "install", "--quiet", "--python", os.path.join(venv, "bin", "python"),
                     "--no-index", "--find-links", wheels, "--cache-dir", cache, "--link-mode", "hardlink",
                     *(["--compile-bytecode"] if compile_ else []), args.requirement]]

        timed(uv(os.path.join(scratch, "fill"), warm_cache))  # fills the warm cache once
        shutil.rmtree(os.path.join(scratch, "fill"))
        times = {"pip": [], "uv, cold cache": [], "uv, warm cache (hard links)": [],
                 "uv, warm, --compile-bytecode": []}
        sizes = {}
        for round_ in range(args.rounds):
            for name in times:
                venv = os.path.join(scratch, f"venv-{round_}-{list(times).index(name)}")
                if name == "pip":
                    commands = pip(venv)
                elif name.startswith("uv, cold"):
                    cold = os.path.join(scratch, f"uv-cache-cold-{round_}")
                    commands = uv(venv, cold)
                else:
                    commands = uv(venv, warm_cache, compile_="bytecode" in name)
                times[name].append(timed(commands))
                sizes[name] = (disk_bytes(venv), shared_bytes(venv))
                shutil.rmtree(venv)
                if name.startswith("uv, cold"):
                    shutil.rmtree(cold)
        print(f"{args.requirement} into a venv of {args.python} from {wheels}, {args.rounds} rounds, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
        print(f"  {subprocess.run([args.uv, '--version'], capture_output=True, text=True).stdout.strip()}, "
              f"{subprocess.run([args.python, '-m', 'pip', '--version'], capture_output=True, text=True).stdout.split(' from ')[0]}")
        base = statistics.median(times["pip"])
        for name, values in times.items():
            own, shared = sizes[name]
            print(f"  {name:<30} wall s {spread(values)}   x{statistics.median(values) / base:.2f} of pip   "
                  f"venv {own / 2**20:.0f} MiB on disk, {shared / 2**20:.0f} MiB of it shared with uv's cache")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
