#!/usr/bin/env python3
"""The folders of leakgate are layers: a file may include its own folder and the layers below it,
never one above it, and never a peer on its own level. Reads the `#include "..."` lines of every
C++ file under include/, lib/, probes/, cmd/ and package/; exits 1 naming each include that breaks the order.

    check_layers.py [ROOT]      check the tree at ROOT (default: this repository)
    check_layers.py --self-test the checker on small trees that break each rule (it must fail them)
"""
import os
import re
import sys
import tempfile

# Lowest first. Folders on one level are peers: neither includes the other. include/leakgate is
# the public API: its headers include only each other.
LAYERS = [
    ["include/leakgate"],
    ["lib/base"],
    ["lib/report"],
    ["lib/python", "lib/cuda", "lib/clang"],
    ["lib/scanner"],
    ["probes"],
    ["lib/workloads"],
    ["lib/lint"],
    ["lib/worker"],
    ["lib/commands"],
    ["cmd"],
    ["package"],  # the extension module hosts the command line too (leakgate-dsl)
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".h", ".hpp", ".cpp", ".cc")


def folder_of(path):
    """The layer folder a repository-relative path belongs to, or None."""
    for level in LAYERS:
        for folder in level:
            if path == folder or path.startswith(folder + "/"):
                return folder
    return None


def level_of(folder):
    for index, level in enumerate(LAYERS):
        if folder in level:
            return index
    raise KeyError(folder)


def violations(root):
    found = []
    for top in ("include", "lib", "probes", "cmd", "package"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                source = folder_of(path)
                if source is None:
                    found.append(f"{path}: in no layer (add its folder to LAYERS)")
                    continue
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for included in INCLUDE.findall(text):
                    target = folder_of(included)
                    if target is None or target == source:
                        continue
                    if level_of(target) > level_of(source):
                        found.append(f"{path}: includes {included}, a layer above {source}")
                    elif level_of(target) == level_of(source):
                        found.append(f"{path}: includes {included}, a peer of {source}")
    return found


def self_test():
    """Each rule broken once in a tiny tree must be reported; a clean tree must pass."""
    cases = {
        "clean": ({"lib/worker/a.cpp": '#include "lib/workloads/b.h"\n#include "lib/base/c.h"\n'}, 0),
        "python includes probes": ({"lib/python/a.cpp": '#include "probes/probe.h"\n'}, 1),
        "python includes worker": ({"lib/python/a.cpp": '#include "lib/worker/client.h"\n'}, 1),
        "lower includes higher": ({"lib/report/a.h": '#include "lib/commands/gate.h"\n'}, 1),
        "peers": ({"lib/cuda/a.cpp": '#include "lib/clang/libclang.h"\n'}, 1),
        "public header includes internal": ({"include/leakgate/a.h": '#include "lib/base/log.h"\n'}, 1),
        "folder in no layer": ({"lib/stray/a.cpp": ""}, 1),
    }
    failures = 0
    for name, (files, expected) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            for path, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            got = len(violations(root))
        if got != expected:
            print(f"self-test `{name}`: {got} violations, expected {expected}")
            failures += 1
    print("self-test:", "failed" if failures else f"{len(cases)} cases as expected")
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    found = violations(root)
    for line in found:
        print(line)
    print(f"{len(found)} include{'s' if len(found) != 1 else ''} out of layer order")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
