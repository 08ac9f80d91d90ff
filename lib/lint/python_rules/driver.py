"""What leakgate calls: lint_paths (every Python file under some paths, the answer in JSON, on a
thread with a deep stack), lint_source (one file, whole or in pieces), and main, the command line
of `python3 lib/lint/python_rules PATH...`."""

from __future__ import annotations

import ast
import json
import os
import sys
import threading

from .file_linter import FileLinter
from .fixes import attach_fixes
from .pieces import PiecewiseLint, _PieceFailed, _Pieces, piece_bytes


def lint_source(path, source):
    """The findings of one file's source (bytes or text). Raises SyntaxError (or ValueError for
    null bytes) when it does not parse. Bytes larger than piece_bytes() are linted in pieces
    (PiecewiseLint), with the same findings; where the split or a piece's parse fails, the file
    is parsed whole as it would be otherwise."""
    size = piece_bytes()
    if len(source) > size:
        pieces = _Pieces.split(path, source, size)
        if pieces is not None:
            try:
                return PiecewiseLint(path, pieces).run()
            except _PieceFailed:
                pass
    tree = ast.parse(source, filename=path)
    linter = FileLinter(path, tree)
    return attach_fixes(linter, source, linter.run())


def python_files(paths):
    """Files to check: each path itself, or the *.py files under a directory, in sorted order."""
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
                for name in sorted(files):
                    if name.endswith(".py"):
                        yield os.path.join(root, name)
        else:
            yield path


# Deep but legal code (a chain of hundreds of `elif`s is a nest of If nodes) is walked on a thread
# whose stack is this large, under a recursion limit this high: analysed, not refused.
DEEP_STACK_BYTES = 512 << 20
DEEP_RECURSION_LIMIT = 200_000


def lint_paths(paths):
    """Lints every file under `paths`; returns a JSON text: {"files": N, "findings": [...],
    "unparsed": [{"file", "line", "message"}]}. A file that cannot be read or parsed is listed
    in `unparsed` and the others are still checked."""
    answer = []
    previous_stack = threading.stack_size(DEEP_STACK_BYTES)
    previous_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous_limit, DEEP_RECURSION_LIMIT))
    try:
        worker = threading.Thread(target=lambda: answer.append(_lint_paths(paths)), name="leakgate-lint")
        worker.start()
        worker.join()
    finally:
        threading.stack_size(previous_stack)
        sys.setrecursionlimit(previous_limit)
    if not answer:
        raise RuntimeError("the lint thread ended without an answer")
    return answer[0]


def _lint_paths(paths):
    findings = []
    unparsed = []
    files = 0
    for path in python_files(paths):
        path = os.path.abspath(path)
        files += 1
        try:
            with open(path, "rb") as handle:
                source = handle.read()
            findings.extend(lint_source(path, source))
        except SyntaxError as error:
            unparsed.append({"file": path, "line": error.lineno or 0,
                             "message": f"does not parse: {error.msg or error}"})
        except ValueError as error:  # null bytes, an undecodable source
            unparsed.append({"file": path, "line": 0, "message": f"does not parse: {error}"})
        except RecursionError:
            unparsed.append({"file": path, "line": 0, "message": "too deeply nested to analyse"})
        except MemoryError:  # CPython's parser gives up on nesting beyond its own stack
            unparsed.append({"file": path, "line": 0,
                             "message": "does not parse: nested too deeply for Python's parser "
                                        "(MemoryError)"})
        except OSError as error:
            unparsed.append({"file": path, "line": 0,
                             "message": f"cannot read: {error.strerror or error}"})
    return json.dumps({"files": files, "findings": [f._asdict() for f in findings],
                       "unparsed": unparsed})


def main(argv):
    result = json.loads(lint_paths(argv or ["."]))
    for finding in result["findings"]:
        print(f"{finding['file']}:{finding['line']}:{finding['column']}: {finding['rule']} "
              f"[{finding['function']}] {finding['name']}: {finding['message']}")
    for entry in result["unparsed"]:
        print(f"{entry['file']}:{entry['line']}: not checked: {entry['message']}")
    print(f"{len(result['findings'])} findings in {result['files']} files")
    return 1 if result["findings"] else 0
