"""A large module linted in pieces of consecutive top-level statements, one piece's tree alive at a
time, with the findings of the whole tree (PiecewiseLint)."""

from __future__ import annotations

import ast
import gc
import os
import tokenize
import warnings

from .kinds import Imports, sorted_findings
from .scopes import Scope, ScopeBuilder
from .flow import FlowAnalyzer
from .file_linter import FileLinter


# A module's syntax tree takes about 150 times its source in memory (4 MiB: about 590 MiB for
# ast.parse alone), so a file larger than this is linted in pieces of consecutive top-level
# statements of about this size, one piece's tree alive at a time. The environment variable
# LEAKGATE_LINT_PIECE_BYTES overrides it (0: every file in pieces of one statement, for tests).
PIECE_BYTES = 1 << 20
PIECE_BYTES_VARIABLE = "LEAKGATE_LINT_PIECE_BYTES"

# Encodings decoded one piece (whole lines) at a time as the whole file is: no state carried
# from line to line. A file in any other is parsed whole.
_PIECE_ENCODINGS = frozenset({"utf-8", "utf-8-sig", "iso-8859-1", "latin-1", "ascii"})
# The first token of a logical line that continues the statement above it at the same level.
_CONTINUATIONS = frozenset({"else", "elif", "except", "finally"})


def piece_bytes():
    value = os.environ.get(PIECE_BYTES_VARIABLE, "")
    try:
        return max(0, int(value)) if value.strip() else PIECE_BYTES
    except ValueError:
        return PIECE_BYTES


class _Pieces:
    """A module's source split into pieces of consecutive top-level statements, each parsed
    anew on demand to the same tree (line and column numbers included) as that part of the whole
    file's: its lines are parsed below as many blank lines as come before it."""

    def __init__(self, path, lines, encoding, bounds):
        self.path = path
        self.lines = lines  # the file's lines, line endings kept
        self.encoding = encoding
        # (first line, line after the last, bytes), lines 1-based, in file order
        self.bounds = bounds

    @classmethod
    def split(cls, path, source, size):
        """The pieces of `source` (bytes), grouped to about `size` bytes each, or None where the
        file is to be parsed whole: one top-level statement, an encoding not read line by line,
        null bytes, `from __future__ import barry_as_FLUFL` (it changes the grammar of what
        follows), or anything tokenize does not take (the whole parse then reports it)."""
        if not isinstance(source, bytes) or b"\0" in source or b"barry_as_FLUFL" in source:
            return None
        lines = source.splitlines(keepends=True)  # bytes: only \n, \r\n and \r end a line
        try:
            starts, encoding = _statement_starts(lines)
        except Exception:  # noqa: BLE001 - any failure to split: the whole parse, as before
            return None
        if encoding not in _PIECE_ENCODINGS or len(starts) < 2:
            return None
        starts[0] = 1  # what comes before the first statement (comments) goes with it
        starts.append(len(lines) + 1)
        bounds = []
        first, size_so_far = 1, 0
        for start, end in zip(starts, starts[1:]):
            size_so_far += sum(len(line) for line in lines[start - 1:end - 1])
            if size_so_far >= size or end == len(lines) + 1:
                bounds.append((first, end, size_so_far))
                first, size_so_far = end, 0
        if len(bounds) < 2:
            return None
        return cls(path, lines, encoding, bounds)

    def __len__(self):
        return len(self.bounds)

    def parse(self, index, again=False):
        """The piece's tree. `again`: a piece parsed before, whose SyntaxWarnings (an invalid
        escape...) were shown then: not shown twice."""
        first, end, _ = self.bounds[index]
        # A byte order mark is one only at the start of the file; elsewhere it is a character.
        encoding = "utf-8" if first > 1 and self.encoding == "utf-8-sig" else self.encoding
        text = "\n" * (first - 1) + b"".join(self.lines[first - 1:end - 1]).decode(encoding)
        if not again:
            return ast.parse(text, filename=self.path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=self.path)


def _statement_starts(lines):
    """The lines (1-based) where the module's top-level statements start, and the source's
    encoding (PEP 263), from tokenize: the first token of a logical line at indentation level 0,
    unless it continues a compound statement (`else:`, `except:`...) or follows a decorator."""
    ends = (b"\r\n", b"\r", b"\n")
    # tokenize's own reading of lone carriage returns is not the parser's: each line is given to
    # it ending in \n (only the line numbers are read).
    normal = iter([line.rstrip(b"\r\n") + b"\n" if line.endswith(ends) else line for line in lines])
    tokens = tokenize.tokenize(lambda: next(normal, b""))
    # The ENCODING token calls utf-8-sig utf-8 (the mark is gone from what it reads): asked apart.
    first_two = iter(lines[:2])
    encoding, _ = tokenize.detect_encoding(lambda: next(first_two, b""))
    starts = []
    depth = 0
    line_start = True  # the next significant token starts a logical line
    decorated = False  # the last logical line at level 0 was a decorator
    skipped = (tokenize.ENCODING, tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER)
    for token in tokens:
        kind = token.type
        if kind == tokenize.INDENT:
            depth += 1
        elif kind == tokenize.DEDENT:
            depth -= 1
        elif kind == tokenize.NEWLINE:
            line_start = True
        elif kind not in skipped and line_start:
            line_start = False
            if depth == 0:
                if not decorated and not (kind == tokenize.NAME and token.string in _CONTINUATIONS):
                    starts.append(token.start[0])
                decorated = kind == tokenize.OP and token.string == "@"
    return starts, encoding


class _PieceLinter(FileLinter):
    """FileLinter over one piece of a module linted in pieces: its scopes are the piece's, but
    what the rules read of the module as a whole (the names it binds and declares global, its
    imports) is the summary of every piece, and the findings and calls are the file's."""

    def __init__(self, lint, tree, findings):
        self.path = lint.path
        self.imports = lint.imports
        self.calls = lint.calls
        self.findings = findings
        self.ever = {}
        if tree is None:  # only the module's flow: no scopes of its own
            return
        # The piece's imports are in the summary already.
        self.builder = ScopeBuilder(tree, Imports())
        self.called = self.builder.called
        self.lambda_names = self.builder.lambda_names
        module = self.builder.module
        summary = lint.module
        module.bound, module.globals = summary.bound, summary.globals
        module.nonlocals, module.definitions = summary.nonlocals, summary.definitions

    def analysed_scopes(self):
        # The module's own flow runs across the pieces (PiecewiseLint), not piece by piece.
        return super().analysed_scopes()[1:]


class PiecewiseLint:
    """FileLinter's findings for a module too large to hold its tree whole, with one piece's
    tree alive at a time.

    What one top-level statement's analysis reads of the others is small, and gathered first:
    pass 1 parses each piece and notes the names the module binds, declares `global` or
    `nonlocal` (the module's Scope, which the scopes inside read through their parents: a name
    bound only further down still shadows a builtin), and the file's imports in the order
    ScopeBuilder meets them (the last binding of a name wins). Pass 2 parses each piece again
    and runs the module's flow over its statements, the state carried from piece to piece (a
    module global bound in one piece and deleted in another), and the first round of every
    scope in it; the calls that pass frame-reaching values are gathered from all of them. Pass 3
    parses again only the pieces with a function of a name some call passes such a value, and
    runs the second round there, from the first round's `ever` of each scope (kept, small) and
    every call of the file. A finding is kept the first time its key is met, in the order the
    whole file's lint meets it: the module's flow, then the first round, then the second.
    Scopes, calls by name and lambdas' names never cross a top-level statement.
    """

    def __init__(self, path, pieces):
        self.path = path
        self.pieces = pieces
        self.uncollected = 0  # bytes of source worked on since the last collection (_PieceWork)

    def run(self):
        """The findings, as FileLinter.run's; raises _PieceFailed when a piece does not parse
        (the caller parses the file whole instead)."""
        self._summarize()
        module_findings, first, second = {}, {}, {}
        self.calls = []
        flow = FlowAnalyzer(_PieceLinter(self, None, module_findings), self.module, set())
        state = {}
        evers = []  # per piece: first-round `ever` of its scopes, by their index in it
        functions = []  # per piece: the names of its functions
        for index in range(len(self.pieces)):
            with _PieceWork(self, index):
                tree = self.pieces.parse(index, again=True)
                state = flow.run_block(tree.body, state)  # None after a `return` at module level
                linter = _PieceLinter(self, tree, first)
                del tree
                scopes = linter.analysed_scopes()
                linter.first_round(scopes)
                evers.append({number: linter.ever[scope] for number, scope in enumerate(scopes)
                              if linter.ever.get(scope)})
                functions.append({scope.node.name for scope in scopes if scope.kind == "function"})
                _release(linter.builder)
                del linter, scopes
        if state is not None:
            flow.check_exit(state, "end", None)
        calls, self.calls = self.calls, []  # the second round's own calls seed nothing
        called = {name for name, _, _, _ in calls}
        for index in range(len(self.pieces)):
            if not functions[index] & called:
                continue
            with _PieceWork(self, index):
                linter = _PieceLinter(self, self.pieces.parse(index, again=True), second)
                scopes = linter.analysed_scopes()
                linter.ever = {scopes[number]: ever for number, ever in evers[index].items()}
                linter.second_round(scopes, calls)
                _release(linter.builder)
                del linter, scopes
        findings = module_findings
        for phase in (first, second):
            for key, finding in phase.items():
                findings.setdefault(key, finding)
        return sorted_findings(findings.values())

    def _summarize(self):
        self.imports = Imports()
        self.module = Scope(None, "module", "<module>", None)
        for index in range(len(self.pieces)):
            with _PieceWork(self, index):
                try:
                    tree = self.pieces.parse(index)
                    builder = ScopeBuilder(tree, self.imports)
                except Exception as error:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError...
                    raise _PieceFailed() from error
                del tree
                module = builder.module
                self.module.bound |= module.bound
                self.module.globals |= module.globals
                self.module.nonlocals |= module.nonlocals
                self.module.definitions |= module.definitions
                _release(builder)
                del builder, module


class _PieceWork:
    """Around the work on one piece: the cyclic collector paused, then one collection.

    Parsing makes a million objects per MiB of source, and the collector, run every 700
    allocations, walks the young ones each time and all of them every so often: two thirds of
    ast.parse's time (4 MiB in pieces of 1 MiB: 1.1 s paused, 3.7 s not). A piece's tree is freed by
    reference counts once _release has broken the scopes' cycles; the collection after it takes
    the small cycles the analysis leaves (each FlowAnalyzer and its context), once per MiB worked
    on, whatever the collector's state in the process (a leakgate worker may run with it
    disabled), which is restored."""

    COLLECT_BYTES = 1 << 20  # a collection per this much source (pieces of one statement: not each)

    def __init__(self, lint, index):
        self.lint = lint
        self.size = lint.pieces.bounds[index][2]

    def __enter__(self):
        self.enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            gc.enable()
        self.lint.uncollected += self.size
        if self.lint.uncollected >= self.COLLECT_BYTES:
            self.lint.uncollected = 0
            gc.collect()
        return False


def _release(builder):
    """Drops what a piece's scopes hold of its tree, so that the tree goes with the last
    reference to it rather than with the next collection: a scope and its parent are a cycle."""
    for scope in builder.scopes.values():
        scope.node = None
        scope.children = []
        scope.first_use = {}
        scope.loads = {}
    builder.scopes = {}


class _PieceFailed(Exception):
    """A piece does not parse alone: the file is parsed whole, which reports what it reports."""
