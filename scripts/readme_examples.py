#!/usr/bin/env python3
"""Regenerates the sample outputs of the documents from real runs, so that none can go stale.

    scripts/readme_examples.py [--build DIR] [--check] [--list] [FILE...]

The documents are README.md and every Markdown file of docs/guide/ and docs/reference/ (DOCUMENTS
below); FILE... limits a run to some of them.

A sample is a fenced block whose lines starting with `$ ` are commands (a trailing `\\` continues
one), each followed by its output, and which an HTML comment right above marks (the comment does
not render):

    <!-- sample -->                  the whole output
    <!-- sample: head=N -->          the first N lines, then `...`
    <!-- sample: keep=REGEX -->      only lines matching REGEX (Python `re.search`); each run of
                                     lines left out becomes one `...`
    <!-- sample: width=N -->         lines cut to N characters, ending in `...`
    <!-- sample: recorded=WHY -->    not run here (a GPU, a release's venv, PyPI): kept as recorded

(`<!-- example -->` marks the Python blocks that tests/package/test_readme.py runs.)
Options combine (`head=20 width=160`; `keep=` comes last and takes the rest of the comment).
Each command runs in a scratch folder whose `fixtures`, `examples` and `build` lead to the
repository's (so files a command writes stay out of the tree); paths of the repository and the
home folder are written relative and as `~`. Without options, each document that holds a sample
is rewritten in place (each whole or not at all). `--check` rewrites nothing: it runs each sample
and fails if its output, figures and a check's worst case aside (they vary run to run), is not the
one recorded, naming the document and the sample: the documents' words, lines and exit codes stay
what the tool says. `--list` prints the samples and their marks.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
# The documents whose samples are run, in this order: the front page, then the guides and the
# reference that the rest of the old README moved to.
DOCUMENTS = ("README.md", "docs/guide/*.md", "docs/reference/*.md")
MARK = re.compile(r"^<!-- sample(?::\s*(.*?))?\s*-->\s*$")
TIMEOUT = 900


class Sample:
    def __init__(self, mark_line, options, start, end, lines):
        self.mark_line = mark_line  # 0-based index of the comment
        self.options = options
        self.start, self.end = start, end  # the fence lines (0-based, inclusive)
        self.lines = lines  # the lines between the fences

    def commands(self):
        """[(command, [output lines])] as recorded."""
        out, at = [], 0
        while at < len(self.lines):
            line = self.lines[at]
            if not line.startswith("$ "):
                if out:
                    out[-1][1].append(line)
                at += 1
                continue
            command = [line[2:]]
            while command[-1].endswith("\\") and at + 1 < len(self.lines):
                at += 1
                command.append(self.lines[at])
            out.append(("\n".join(command), []))
            at += 1
        return out


def parse_options(text):
    options = {}
    text = (text or "").strip()
    if "keep=" in text:
        text, keep = text.split("keep=", 1)
        options["keep"] = re.compile(keep.strip())
    if "recorded=" in text:
        text, why = text.split("recorded=", 1)
        options["recorded"] = why.strip()
    for word in text.split():
        name, _, value = word.partition("=")
        if name not in ("head", "width") or not value.isdigit():
            raise SystemExit(f"readme_examples: unknown option {word!r} (head=N, width=N, keep=REGEX, recorded=WHY)")
        options[name] = int(value)
    return options


def documents(chosen):
    """The documents to process, as paths relative to ROOT: every one of DOCUMENTS, or those of
    them named in `chosen`."""
    every = []
    for pattern in DOCUMENTS:
        every += sorted(os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, pattern)))
    if not chosen:
        return every
    named = []
    for path in chosen:
        relative = os.path.relpath(os.path.abspath(path), ROOT)
        if relative not in every:
            raise SystemExit(f"readme_examples: {path} is not one of the documents ({', '.join(DOCUMENTS)})")
        named.append(relative)
    return named


def samples(lines, name):
    found = []
    for index, line in enumerate(lines):
        match = MARK.match(line)
        if not match:
            continue
        start = index + 1
        while start < len(lines) and not lines[start].strip():
            start += 1
        if start >= len(lines) or not lines[start].startswith("```"):
            raise SystemExit(f"{name}:{index + 1}: a sample mark with no fenced block under it")
        end = start + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if end >= len(lines):
            raise SystemExit(f"{name}:{start + 1}: a fenced block that does not end")
        sample = Sample(index, parse_options(match.group(1)), start, end, lines[start + 1:end])
        if not sample.commands():
            raise SystemExit(f"{name}:{start + 1}: a sample without a `$ ` command")
        found.append(sample)
    return found


def scratch(build):
    directory = tempfile.mkdtemp(prefix="leakgate-readme-")
    for name, target in (("fixtures", os.path.join(ROOT, "fixtures")),
                         ("examples", os.path.join(ROOT, "examples")),
                         ("build", os.path.abspath(build))):
        os.symlink(target, os.path.join(directory, name))
    return directory


def run(command, cwd):
    process = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                             timeout=TIMEOUT, env={**os.environ, "NO_COLOR": "1"})
    text = process.stdout + process.stderr
    home = os.path.expanduser("~")
    # Absolute, and relative to the scratch folder (leakgate shows a path relative where it can).
    for prefix, shown in ((ROOT + "/", ""), (cwd + "/", ""), (os.path.relpath(ROOT, cwd) + "/", ""),
                          (home + "/", "~/")):
        text = text.replace(prefix, shown)
    return text.rstrip("\n").split("\n") if text.strip() else []


def shaped(lines, options):
    if "keep" in options:
        kept, dropped = [], False
        for line in lines:
            if options["keep"].search(line):
                kept.append(line)
                dropped = False
            elif not dropped:
                kept.append("...")
                dropped = True
        lines = kept
    if "head" in options and len(lines) > options["head"]:
        lines = lines[:options["head"]] + ["..."]
    if "width" in options:
        width = options["width"]
        lines = [line if len(line) <= width else line[:width - 3] + "..." for line in lines]
    return lines


WORST = re.compile(r"worst [^:]*\):")
BYTES = re.compile(r"-?\d+(?:\.\d+)? (?:B|KiB|MiB|GiB|TiB)(?: \(-?\d+ bytes\))?")


def same_sample(recorded, fresh, options):
    """Whether a recorded sample still says what the fresh output (shaped but not cut to width)
    says, figures aside. A line cut to width is compared as a prefix, its last words dropped
    (the cut moves with the figures' lengths and may fall inside one)."""
    if len(recorded) != len(fresh):
        return False
    for old, new in zip(recorded, fresh):
        old_masked, new_masked = digitless([old])[0], digitless([new])[0]
        if old_masked == new_masked:
            continue
        cut = "width" in options and (old.endswith("...") or len(new) > options["width"])
        if not cut:
            return False
        words = (old[:-3] if old.endswith("...") else old).split(" ")
        if not any(new_masked.startswith(digitless([" ".join(words[:len(words) - drop])])[0])
                   for drop in range(1, 4) if len(words) > drop):
            return False
    return True


def digitless(lines):
    """The lines with their figures masked: a byte figure whole (its unit moves with its size),
    the worst case a check names (which of near-equal cases measured highest varies run to run),
    then every other run of digits."""
    return [re.sub(r"\d+", "#", WORST.sub("worst <case>:", BYTES.sub("<bytes>", line))) for line in lines]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build whose leakgate runs")
    parser.add_argument("--check", action="store_true", help="compare, digits aside; rewrite nothing")
    parser.add_argument("--list", action="store_true", help="list the samples")
    parser.add_argument("files", nargs="*", metavar="FILE", help="only these documents (default: all)")
    args = parser.parse_args()
    texts = {}
    found = {}
    for name in documents(args.files):
        with open(os.path.join(ROOT, name), encoding="utf-8") as handle:
            texts[name] = handle.read().split("\n")
        found[name] = samples(texts[name], name)
    if args.list:
        for name, document_samples in found.items():
            for sample in document_samples:
                mark = sample.options.get("recorded")
                for command, _ in sample.commands():
                    print(f"{name}:{sample.start + 2}: {'recorded (' + mark + ')' if mark else 'run'}: $ {command}")
        return 0
    if not os.access(os.path.join(args.build, "leakgate"), os.X_OK):
        print(f"readme_examples: no {args.build}/leakgate (build it first: scripts/build.sh)", file=sys.stderr)
        return 2
    directory = scratch(args.build)
    stale = []
    try:
        for name, document_samples in found.items():
            lines = texts[name]
            for sample in reversed(document_samples):  # from the end, so earlier line numbers hold
                if "recorded" in sample.options:
                    continue
                body = []
                for command, recorded in sample.commands():
                    raw = run(command, directory)
                    output = shaped(raw, sample.options)
                    where = f"{name}:{sample.start + 2}: $ {command.splitlines()[0]}"
                    print(where, file=sys.stderr)
                    uncut = shaped(raw, {k: v for k, v in sample.options.items() if k != "width"})
                    if args.check and not same_sample(recorded, uncut, sample.options):
                        stale.append((where, recorded, output))
                    body += ["$ " + command.split("\n")[0]] + command.split("\n")[1:] + output
                lines[sample.start + 1:sample.end] = body
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if args.check:
        for where, recorded, output in stale:
            print(f"\n{where}: the sample is stale (digits aside). Recorded:", file=sys.stderr)
            print("\n".join("  | " + line for line in recorded), file=sys.stderr)
            print("Now:", file=sys.stderr)
            print("\n".join("  | " + line for line in output), file=sys.stderr)
        if stale:
            print(f"\n{len(stale)} stale sample(s): run scripts/readme_examples.py", file=sys.stderr)
        return 1 if stale else 0
    for name, document_samples in found.items():
        if not any("recorded" not in sample.options for sample in document_samples):
            continue  # nothing was run: leave the file as it is
        path = os.path.join(ROOT, name)
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix="." + os.path.basename(path) + ".",
                                         suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("\n".join(texts[name]))
        os.replace(temporary, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
