"""Machine-applicable fixes (`leakgate lint --fix`, SARIF `fixes`): for the findings whose shape has
one edit that is always correct, that edit, as typed text replacements.

The one edit: the rest of the function's body, from the top-level statement that binds the local
(or defines the recursive closure), goes into a `try:` whose `finally:` sets each local to None:

    def kernel(cls, *args):                 def kernel(cls, *args):
        cur_frame = inspect.currentframe()      try:
        ...                                         cur_frame = inspect.currentframe()
        return cls.register(...)                    ...
                                                    return cls.register(...)
                                                finally:
                                                    cur_frame = None

Why this edit: a `finally:` runs on every way out (a return, a raise, the end, a generator's
close), so the local is unbound from the frame whatever path was taken: what the rules ask
(own-frame-local, and closure-cycle's "unbound on every way out"). `name = None` rather than
`del name`: an assignment never fails, while `del` raises where the local was never bound (an
exception before the binding) or was deleted already on the path taken. After the function has
returned, its locals are seen by nothing but its frame, so clearing them changes nothing the
program can observe but the cycle; where something else could still read the name, no fix is
offered: a local that a nested function reads (its cell outlives the call), and for a recursive
closure one that may be called after the function returns (anything but a plain function or
lambda, undecorated, not a generator or coroutine, only ever called by name, by the enclosing
function, the closures of the cycle themselves, or a list, set or dict comprehension in them, or a
generator expression that `str.join`, `list`, `sorted` and the like consume at once).
A `del` where the last use ends is not used: it misses the exits an exception takes.

Not fixed: `frame-stored` (what is stored is read later: which value to keep instead of the
frame or exception is the program's choice), closure-cycle's callback stored on what it captures
(it needs a weakref), module and class bodies, a function whose body shares a line with its `def`
or another statement, a file not in UTF-8, and a file linted in pieces (over 1 MiB).

Every edit is checked before it is offered: the edited source must parse to exactly the syntax
tree of the original with the `try:`/`finally:` put in (so re-indenting changed no string and no
statement moved). Lines inside a multi-line string are not re-indented (their text is the
string's), blank lines neither.
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import NamedTuple

from .syntax import walk

# Calls that consume a generator expression before they return: one read inside them ends with
# the call.
_EAGER_CONSUMERS = frozenset({"list", "tuple", "set", "frozenset", "dict", "sorted", "sum", "min",
                              "max", "any", "all", "join"})


class FixTarget(NamedTuple):
    """What one finding's fix clears: the locals `names` of function `scope`, from the top-level
    statement of its body that holds line `line` on. `closures`: for a recursive closure, the
    nested functions and lambdas of the cycle (checked to be called only while the function runs)."""

    scope: object
    names: tuple
    line: int
    closures: tuple = ()


class _Wrap:
    def __init__(self, function, index, names):
        self.function = function  # the FunctionDef node
        self.index = index  # its body's first statement in the try
        self.names = list(names)
        self.keys = []  # the findings it fixes
        self.start = self.end = 0
        self.indent = self.unit = ""
        self.inner = []


def attach_fixes(linter, source, findings):
    """`findings` with `fix_edits` for those a fix targets (linter.fix_targets), where the edit
    can be made and checked. `source`: the file's bytes."""
    targets = getattr(linter, "fix_targets", None)
    if not targets:
        return findings
    text = _decoded(source)
    if text is None:
        return findings
    wraps = {}  # id(function node) -> _Wrap
    for finding in findings:
        key = (finding.rule, finding.line, finding.column, finding.name)
        target = targets.get(key)
        if target is None or not _clearable(linter, target):
            continue
        node = target.scope.node
        index = next((i for i, statement in enumerate(node.body)
                      if statement.lineno <= target.line <= statement.end_lineno), None)
        if index is None:
            continue
        wrap = wraps.get(id(node))
        if wrap is None:
            wrap = wraps[id(node)] = _Wrap(node, index, ())
        wrap.index = min(wrap.index, index)
        wrap.names.extend(name for name in target.names if name not in wrap.names)
        wrap.keys.append(key)
    if not wraps:
        return findings
    edits = _edits(linter.path, text, list(wraps.values()))
    return [finding._replace(fix_edits=edits[key])
            if (key := (finding.rule, finding.line, finding.column, finding.name)) in edits
            else finding for finding in findings]


def _decoded(source):
    if isinstance(source, str):
        return source
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError:
        return None
    if encoding not in ("utf-8", "utf-8-sig"):
        return None
    try:
        text = source.decode(encoding)
    except UnicodeDecodeError:
        return None
    return text


# Which locals can be cleared without the program seeing it ----------------------------------------


def _clearable(linter, target):
    scope = target.scope
    if scope.kind != "function" or not isinstance(scope.node, (ast.FunctionDef,
                                                               ast.AsyncFunctionDef)):
        return False
    if any(name not in scope.locals() for name in target.names):
        return False
    if not target.closures:
        # A nested function that reads the local holds its cell, which may outlive the call.
        return not any(name in child.free_uses() for child in scope.children
                       for name in target.names)
    return all(_only_called_while_running(linter, scope, target, closure)
               for closure in target.closures)


def _only_called_while_running(linter, scope, target, closure):
    node = closure.node
    names = set(target.names)
    if isinstance(node, ast.AsyncFunctionDef) or getattr(node, "decorator_list", None):
        return False
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in _own_nodes(node)):
        return False
    members = {id(c.node) for c in target.closures}
    # Who reads the names: the enclosing function, the closures of the cycle, and what is nested
    # in them only if it is consumed at once.
    for child in scope.children:
        if id(child.node) not in members and names & set(child.free_uses()):
            return False
    for reader in [scope, *target.closures]:
        for name in names:
            if any(id(use) not in linter.called for use in reader.loads.get(name, ())):
                return False
        for child in reader.children:
            if id(child.node) in members or not names & set(child.free_uses()):
                continue
            if not _consumed_at_once(reader, child, names, linter):
                return False
    return True


def _own_nodes(function):
    """The nodes of a function's own code, not those of functions, lambdas or classes in it."""
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _consumed_at_once(reader, child, names, linter):
    """A list, set or dict comprehension (it runs where it stands), or a generator expression
    passed straight to a call in _EAGER_CONSUMERS, that itself reads the names only by calling
    them and holds no other nested scope reading them."""
    node = child.node
    if isinstance(node, ast.GeneratorExp):
        parent = next((n for n in walk(reader.node) if isinstance(n, ast.Call)
                       and any(a is node for a in n.args)), None)
        if parent is None:
            return False
        func = parent.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if called not in _EAGER_CONSUMERS:
            return False
    elif not isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp)):
        return False
    if child.children:
        return False
    return all(id(use) in linter.called for name in names for use in child.loads.get(name, ()))


# The edit --------------------------------------------------------------------------------------


def _line_starts_inside_string(text):
    """Lines (1-based) whose first character is inside a string token begun on an earlier line:
    their text is the string's, so they keep their indentation."""
    inside = set()
    kinds = {tokenize.STRING}
    for name in ("FSTRING_MIDDLE", "FSTRING_END"):
        if hasattr(tokenize, name):
            kinds.add(getattr(tokenize, name))
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in kinds and token.end[0] > token.start[0]:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return None
    return inside


def _edits(path, text, wraps):
    """{finding key: [edit]} for the wraps that can be made; each outermost wrap is one edit,
    checked on its own, and every finding inside it gets that edit."""
    if "\r" in text.replace("\r\n", ""):
        return {}  # old Mac line ends: ast counts them, str.split would not
    lines = text.split("\n")  # lines[i] is line i + 1, without its "\n"
    newline = "\r\n" if lines and lines[0].endswith("\r") else "\n"
    strings = _line_starts_inside_string(text)
    if strings is None:
        return {}
    usable = [wrap for wrap in wraps if _place(wrap, lines)]
    outer = []
    for wrap in sorted(usable, key=lambda w: (w.start, -w.end)):
        parent = next((o for o in reversed(outer) if o.start <= wrap.start and wrap.end <= o.end),
                      None)
        if parent is None:
            outer.append(wrap)
        else:
            _innermost(parent, wrap).inner.append(wrap)
    out = {}
    for wrap in outer:
        rendered = _render(wrap, lines, strings, newline, "")
        last = lines[wrap.end - 1]
        if last.endswith("\r"):
            last = last[:-1]
        new_text = newline.join(lines[:wrap.start - 1] + rendered + lines[wrap.end:])
        if not _same_tree_with_wraps(text, new_text, _all(wrap)):
            continue
        body = newline.join(rendered)
        if body.endswith("\r"):
            body = body[:-1]
        edit = {"file": path, "start_line": wrap.start, "start_column": 1, "end_line": wrap.end,
                "end_column": len(last) + 1, "text": body}
        for each in _all(wrap):
            for key in each.keys:
                out[key] = (edit,)
    return out


def _innermost(wrap, inside):
    for inner in wrap.inner:
        if inner.start <= inside.start and inside.end <= inner.end:
            return _innermost(inner, inside)
    return wrap


def _all(wrap):
    yield wrap
    for inner in wrap.inner:
        yield from _all(inner)


def _place(wrap, lines):
    """The lines the wrap covers and its indentation; False where the body's statements do not
    each begin their own line."""
    function = wrap.function
    first = function.body[wrap.index]
    last = function.body[-1]
    if first.lineno <= function.lineno or first.lineno > len(lines):
        return False
    line = lines[first.lineno - 1]
    prefix = line.encode("utf-8")[:first.col_offset].decode("utf-8", "replace")
    if prefix.strip() or (wrap.index > 0 and function.body[wrap.index - 1].end_lineno >= first.lineno):
        return False
    header = lines[function.lineno - 1]
    header_indent = header[:len(header) - len(header.lstrip(" \t"))]
    if function.decorator_list:
        header = lines[function.decorator_list[0].lineno - 1]
        header_indent = header[:len(header) - len(header.lstrip(" \t"))]
    if not prefix.startswith(header_indent) or prefix == header_indent:
        return False
    wrap.start, wrap.end = first.lineno, last.end_lineno
    wrap.indent, wrap.unit = prefix, prefix[len(header_indent):]
    return True


def _render(wrap, lines, strings, newline, extra):
    """The lines wrap.start..wrap.end as they are once wrapped (without their line ends)."""
    out = [extra + wrap.indent + "try:"]
    at = wrap.start
    for inner in sorted(wrap.inner, key=lambda w: w.start):
        out.extend(_indented(lines, strings, at, inner.start - 1, extra + wrap.unit))
        out.extend(_render(inner, lines, strings, newline, extra + wrap.unit))
        at = inner.end + 1
    out.extend(_indented(lines, strings, at, wrap.end, extra + wrap.unit))
    cr = "\r" if newline == "\r\n" else ""
    out[0] += cr
    out.append(extra + wrap.indent + "finally:" + cr)
    out.extend(extra + wrap.indent + wrap.unit + f"{name} = None" + cr for name in wrap.names)
    return out


def _indented(lines, strings, first, last, extra):
    out = []
    for number in range(first, last + 1):
        line = lines[number - 1]
        if number in strings or not line.strip():
            out.append(line)
        else:
            out.append(extra + line)
    return out


def _same_tree_with_wraps(old_text, new_text, wraps):
    """Whether new_text parses to old_text's tree with each wrap's try/finally put in."""
    try:
        expected = ast.parse(old_text)
        got = ast.parse(new_text)
    except (SyntaxError, ValueError):
        return False
    functions = {(n.lineno, n.col_offset): n for n in ast.walk(expected)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    # Innermost first: an outer wrap's statements hold the inner ones' try already.
    for wrap in sorted(wraps, key=lambda w: -w.start):
        node = functions[(wrap.function.lineno, wrap.function.col_offset)]
        clear = [ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                            value=ast.Constant(value=None, kind=None), type_comment=None)
                 for name in wrap.names]
        node.body[wrap.index:] = [ast.Try(body=node.body[wrap.index:], handlers=[], orelse=[],
                                          finalbody=clear)]
    return ast.dump(expected) == ast.dump(got)
