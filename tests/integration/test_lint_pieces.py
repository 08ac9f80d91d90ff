"""The lint rules on a large module, in pieces of top-level statements (PiecewiseLint), must find
exactly what they find on the whole tree: checked with the rules alone (no binary), the piece
threshold at 0 (every file in pieces of one statement) against the whole parse, on shapes
written here for what one statement reads of the others, on this interpreter's standard
library and on the repository's own fixtures and tests.

    python3 -m unittest -v test_lint_pieces

LEAKGATE_LINT_PIECES_STDLIB=0 leaves out the standard library (about 15 s of the test: it is linted
twice).
"""

import json
import os
import sysconfig
import tempfile
import textwrap
import unittest
from unittest import mock

from run_lint_fixture import load_rules

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
RULES = os.path.join(REPO, "lib", "lint", "python_rules")

rules = load_rules(RULES, "leakgate_python_rules")
piecewise = rules.pieces  # the module that splits a file

WHOLE = {piecewise.PIECE_BYTES_VARIABLE: str(1 << 62)}
PIECES = {piecewise.PIECE_BYTES_VARIABLE: "0"}


def lint(paths, env):
    """lint_paths' report (a dict) under the piece threshold `env`, and how many files were
    linted in pieces to the end (not parsed whole after a failed split or piece)."""
    done = []
    run = piecewise.PiecewiseLint.run

    def counted(self):
        findings = run(self)
        done.append(self.path)
        return findings

    with mock.patch.dict(os.environ, env), mock.patch.object(piecewise.PiecewiseLint, "run", counted):
        report = json.loads(rules.lint_paths(paths))
    # A file linted in pieces gets no fix edits (fixes.py needs the whole tree): the findings are
    # what must be the same.
    for finding in report["findings"]:
        finding.pop("fix_edits", None)
    return report, len(done)


def by_file(report):
    out = {}
    for finding in report["findings"]:
        out.setdefault(finding["file"], []).append(finding)
    for entry in report["unparsed"]:
        out.setdefault(entry["file"], []).append(entry)
    return out


# Shapes where one top-level statement's findings depend on another's (each one a piece at
# threshold 0), and the statements whose continuation clauses start at column 0.
CASES = {
    # A builtin exception class named by a local is raised anew (no finding), unless the module
    # binds that name: here only after the function.
    "shadowed_later": """\
        def fails():
            err = ValueError
            raise err


        ValueError = type("ValueError", (Exception,), {})
    """,
    # The file's imports, wherever they are, name inspect's and sys's functions.
    "import_later": """\
        def kernel():
            here = currentframe()
            return here.f_lineno


        from inspect import currentframe
    """,
    # The module's flow runs across its statements: bound in one, deleted in a later one.
    "module_flow": """\
        import sys

        frame = sys._getframe()
        kept = sys._getframe(1)


        def between():
            pass


        del frame
    """,
    # A `global` at module level (legal, if odd) makes a module-level assignment a global's store.
    "module_global": """\
        import sys

        saved = sys._getframe()


        global saved
    """,
    # `global` in a function naming a module name defined after it.
    "global_in_function": """\
        import sys


        def remember():
            global registry
            registry = sys._getframe()


        registry = None
    """,
    # A call in one statement passes a frame to a function defined in another: the second round.
    "call_across": """\
        import sys


        def outer():
            store(sys._getframe())


        class Keeper:
            def run(self):
                self.stash(sys._getframe())

            def stash(self, frame):
                self.frame = frame


        def store(frame):
            holder.frame = frame
    """,
    # setattr is the builtin unless the module binds the name.
    "setattr_later": """\
        import sys
        setattr(sys, "kept", sys._getframe())
        kept = sys._getframe(1)
        setattr = print
    """,
    # A `return` at module level (a compile error, not a parse error) ends the module's flow.
    "module_return": """\
        import sys
        frame = sys._getframe()
        return
        other = sys._getframe()
    """,
    "decorators": """\
        import sys
        import functools


        @functools.wraps
        @functools.lru_cache(
            maxsize=None)
        def decorated(fn):
            fn._decorator_frame = sys._getframe(1)
            return fn


        @decorated
        class Decorated:
            frame = sys._getframe()
    """,
    "compound": """\
        import sys
        if sys.argv:
            first = sys._getframe()
        elif sys.path:
            first = None
        else:
            del first
        try:
            import inspect
        except ImportError:
            inspect = None
        else:
            second = inspect.stack()
        finally:
            sys.kept = sys._getframe()
        for item in []:
            pass
        else:
            third = sys._getframe(); fourth = \\
                sys._getframe()
        while False:
            pass
        else:
            pass
        with open(__file__) as handle:
            pass
        match sys.argv:
            case [name]:
                fifth = sys._getframe()
            case _:
                pass
        x = [
        1,
        2]
        text = '''
        def not_a_statement():
            pass
        '''
        # a comment at column 0

          # and one indented
        def last():
            return sys._getframe(0)
    """,
    # A recursive closure is a cycle through its enclosing function's cell; one declared global
    # (bound at module level in another statement too) reads a module name: no cell.
    "closure_cycles": """\
        def outer(data):
            global walk

            def walk(n):
                return walk(n - 1) if n else data

            def inner(n):
                return inner(n - 1) if n else data

            return walk(3) + inner(3)


        walk = None
    """,
    "future_annotations": """\
        \"\"\"A docstring first.\"\"\"
        from __future__ import annotations
        import sys


        def annotated(frame: sys.FrameType = None) -> list[int]:
            here = sys._getframe()
            return []
    """,
}


class Pieces(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name

    def write(self, name, data):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def assert_same(self, path, pieced=True):
        whole, whole_pieced = lint([path], WHOLE)
        pieces, pieces_pieced = lint([path], PIECES)
        self.assertEqual(whole_pieced, 0)
        self.assertEqual(pieces, whole)
        self.assertEqual(pieces_pieced, 1 if pieced else 0)
        return whole

    def test_cases(self):
        for name, source in CASES.items():
            with self.subTest(name):
                data = textwrap.dedent(source).encode()
                pieces = piecewise._Pieces.split(name, data, 0)
                self.assertIsNotNone(pieces)
                self.assertGreater(len(pieces), 1)
                report = self.assert_same(self.write(f"{name}.py", data))
                self.assertTrue(report["findings"], name)

    def test_statement_starts(self):
        data = textwrap.dedent(CASES["compound"]).encode()
        starts, encoding = piecewise._statement_starts(data.splitlines(keepends=True))
        self.assertEqual(encoding, "utf-8")
        lines = data.decode().splitlines()
        self.assertEqual([lines[n - 1].split()[0] for n in starts],
                         ["import", "if", "try:", "for", "while", "with", "match", "x", "text",
                          "def"])

    def test_a_coding_declaration(self):
        source = textwrap.dedent("""\
            # -*- coding: latin-1 -*-
            import sys
            label = "café"


            def kernel():
                café = sys._getframe()
                return café
        """)
        report = self.assert_same(self.write("latin.py", source.encode("latin-1")))
        self.assertEqual([f["name"] for f in report["findings"]], ["café"])
        self.assertEqual(report["findings"][0]["line"], 7)

    def test_line_endings_and_a_byte_order_mark(self):
        source = (textwrap.dedent(CASES["module_flow"])
                  + "\ndef end():\n    here = sys._getframe()\n    return 1\n")
        for ending in ("\r\n", "\r"):
            with self.subTest(repr(ending)):
                data = b"\xef\xbb\xbf" + source.replace("\n", ending).encode()
                report = self.assert_same(self.write("endings.py", data))
                self.assertEqual(len(report["findings"]), 2)

    def test_a_syntax_error_in_the_middle(self):
        source = textwrap.dedent(CASES["call_across"]) + "\ndef broken(:\n    pass\n\n\nx = 1\n"
        whole = self.assert_same(self.write("broken.py", source.encode()), pieced=False)
        self.assertEqual(whole["findings"], [])
        self.assertEqual([u["line"] for u in whole["unparsed"]],
                         [source.splitlines().index("def broken(:") + 1])

    def test_a_small_file_takes_the_whole_path(self):
        path = self.write("small.py", textwrap.dedent(CASES["call_across"]).encode())
        self.assertEqual(lint([path], {piecewise.PIECE_BYTES_VARIABLE: ""})[1], 0)
        self.assertEqual(lint([path], {piecewise.PIECE_BYTES_VARIABLE: "100"})[1], 1)

    def test_the_repository_sources(self):
        self.assert_same_files([os.path.join(REPO, "fixtures"), os.path.join(REPO, "tests")])

    @unittest.skipIf(os.environ.get("LEAKGATE_LINT_PIECES_STDLIB") == "0", "asked to skip")
    def test_the_standard_library(self):
        stdlib = sysconfig.get_paths()["stdlib"]
        left_out = {"site-packages", "dist-packages", "test", "tests", "idle_test"}
        paths = []
        for root, dirs, files in os.walk(stdlib):
            dirs[:] = sorted(d for d in dirs if d not in left_out)
            paths.extend(os.path.join(root, name) for name in sorted(files) if name.endswith(".py"))
        self.assertGreater(len(paths), 300)
        self.assert_same_files(paths)

    def assert_same_files(self, paths):
        whole, whole_pieced = lint(paths, WHOLE)
        pieces, pieces_pieced = lint(paths, PIECES)
        self.assertEqual(whole_pieced, 0)
        self.assertEqual(pieces["files"], whole["files"])
        self.assertTrue(whole["findings"])
        # Nearly every file splits (one of a single statement, or that does not parse, does not).
        self.assertGreater(pieces_pieced, whole["files"] * 0.8)
        expected, got = by_file(whole), by_file(pieces)
        differ = sorted(path for path in set(expected) | set(got)
                        if expected.get(path) != got.get(path))
        self.assertEqual(differ, [], f"{len(differ)} files differ")
        self.assertEqual(pieces, whole)


if __name__ == "__main__":
    unittest.main()
