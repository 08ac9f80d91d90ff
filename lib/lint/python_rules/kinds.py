"""What a value holds, as far as frames go (its kind: the running function's own frame, a
traceback through it, a caught exception, a caller's frame...), what a finding says of each kind
and the fix it gives, the states the flow analysis carries (Binding, merge, without), a finding
itself, and where frames come from: the file's names for inspect and sys (Imports)."""

from __future__ import annotations

import ast
import builtins
from typing import NamedTuple


OWN_FRAME_LOCAL = "own-frame-local"
FRAME_STORED = "frame-stored"

# What a value holds, as far as frames go. The "own" kinds reach the running function's frame.
KIND_TEXT = {
    "frame": "this function's own frame",
    "tb_frame": "a frame from a traceback through this function: its own, or one it called",
    "traceback": "a traceback through this function's frame",
    "exception": "a caught exception, whose __traceback__ holds this function's frame",
    "exc_info": "sys.exc_info(), whose traceback holds this function's frame",
    "stack": "frame records from inspect.stack() or inspect.trace(), the first of which is this "
             "function's own frame",
    "frame_info": "the frame record of this function's own frame",
    "holds_own": "a container holding this function's frame, a traceback or a caught exception",
    "raised": "the exception it raises, whose __traceback__ gets this function's frame",
    "caller": "a caller's frame",
    "caller_info": "a frame record holding a caller's frame",
    "callers": "frame records of the callers' frames",
    "holds_caller": "a container holding a caller's frame",
    # sys.exc_info() outside this function's handlers: an exception a caller is handling, whose
    # traceback does not go through this frame.
    "other_exc_info": "sys.exc_info() of an exception a caller is handling",
    "other_exception": "an exception a caller is handling",
    "other_traceback": "the traceback of an exception a caller is handling",
    # A free variable of a nested function or class body: what the enclosing function bound.
    "enclosing": "a value of an enclosing function that reaches its frame (its own frame, a "
                 "traceback through it or a caught exception)",
}
OWN_KINDS = frozenset(
    {"frame", "tb_frame", "traceback", "exception", "exc_info", "stack", "frame_info", "holds_own",
     "raised"})

# Attribute reads that lead from one kind to another; every other attribute leaves frames behind.
ATTRIBUTE_KIND = {
    ("frame", "f_back"): "caller",
    ("caller", "f_back"): "caller",
    ("tb_frame", "f_back"): "tb_frame",
    ("frame_info", "frame"): "frame",
    ("caller_info", "frame"): "caller",
    ("traceback", "tb_frame"): "tb_frame",
    ("traceback", "tb_next"): "traceback",
    ("exception", "__traceback__"): "traceback",
    ("exception", "__context__"): "exception",
    ("exception", "__cause__"): "exception",
    ("other_exception", "__traceback__"): "other_traceback",
    ("other_exception", "__context__"): "other_exception",
    ("other_exception", "__cause__"): "other_exception",
    ("other_traceback", "tb_frame"): "caller",
    ("other_traceback", "tb_next"): "other_traceback",
}

# Attributes whose store is exception chaining (what `raise ... from` does), not a retention.
CHAINING_ATTRIBUTES = frozenset({"__cause__", "__context__", "__traceback__", "__suppress_context__"})

# Methods that put their arguments into the object they are called on.
STORING_METHODS = frozenset({"append", "appendleft", "extend", "extendleft", "insert", "add",
                             "setdefault", "update", "put", "put_nowait"})

FIX_FRAME = ("Keep no local that names the frame: take what you need in one expression "
             "(`inspect.currentframe().f_back` or `sys._getframe(1)` for the caller, or the file, "
             "line and function captured eagerly); if a local must name it, `del` it (or set it to "
             "None) in a `finally:` that every path runs.")
FIX_EXCEPTION = ("Do not keep the exception, its traceback or sys.exc_info() in a local past the "
                 "handler: keep `traceback.TracebackException`, the formatted text or the values you "
                 "need, or `del` the variable (or set it to None) in a `finally:`.")
FIX_STACK = ("inspect.stack() and inspect.trace() start at this function's own frame: read the "
             "fields you need (`inspect.stack()[1].filename`) without binding the list, prefer "
             "`sys._getframe(1)` for the caller, or `del` the variable in a `finally:`.")
FIX_RAISED = ("Raise the exception without naming it in a local (`raise Error(...)`), or drop the "
              "local on the way out: `try: raise err` / `finally: err = None`, as "
              "socket.create_connection does.")
FIX_CONTAINER = ("Put the formatted text or the values you need in the container instead of the "
                 "frame or exception, or clear the container (`.clear()`, `del`, or rebind it to "
                 "None) in a `finally:`.")
FIX_STORED = ("Store what you need instead of the frame: the source location (file, line, function) "
              "captured eagerly, a `traceback.FrameSummary`, or for an exception "
              "`traceback.TracebackException` or its formatted text. A frame pins every caller's "
              "frame and locals for as long as the store lives.")
FIX_CLOSURE = ("Read what the nested function needs from the frame before defining it (file, line, "
               "names) and capture those values, not the frame; or `del` the variable once the "
               "nested function no longer needs it.")


def describe(kind, scope):
    """KIND_TEXT, for the scope at hand: a module's or a class body's frame is no function's."""
    text = KIND_TEXT[kind]
    if scope.kind == "module":
        return text.replace("this function's", "the module's").replace("this function", "the module")
    if scope.kind == "class":
        return text.replace("this function's", "the class body's").replace("this function",
                                                                            "the class body")
    return text


def own_fix(kind):
    if kind in ("frame", "tb_frame"):
        return FIX_FRAME
    if kind in ("stack", "frame_info"):
        return FIX_STACK
    if kind == "holds_own":
        return FIX_CONTAINER
    if kind == "raised":
        return FIX_RAISED
    return FIX_EXCEPTION


# What a value of the caller's is, seen from a function it is passed to: the caller's own frame is
# a caller's frame there, the exception it handles one that a caller handles.
AS_ARGUMENT = {
    "frame": "caller", "tb_frame": "caller", "frame_info": "caller_info", "stack": "callers",
    "holds_own": "holds_caller", "exception": "other_exception", "raised": "other_exception",
    "exc_info": "other_exc_info", "traceback": "other_traceback", "enclosing": "caller",
}


class Binding(NamedTuple):
    """One assignment that made a name hold a frame-reaching value."""

    kind: str
    line: int
    column: int  # 1-based
    source: str  # the value as written, shortened


# A state maps each name that may hold a frame-reaching value to the bindings that may be live;
# None is an unreachable point.
def merge(states):
    live = [state for state in states if state is not None]
    if not live:
        return None
    out = {}
    for state in live:
        for name, bindings in state.items():
            out[name] = out.get(name, frozenset()) | bindings
    return out


def without(state, name):
    if state is None or name not in state:
        return state
    out = dict(state)
    del out[name]
    return out


class Finding(NamedTuple):
    rule: str
    file: str
    line: int
    column: int
    function: str
    name: str
    message: str
    fix: str
    # The edits that fix it (fixes.py): ({file, start_line, start_column, end_line, end_column,
    # text},) with 1-based lines and columns, the end excluded, columns in characters.
    fix_edits: tuple = ()


def sorted_findings(findings):
    return sorted(findings, key=lambda f: (f.line, f.column, f.rule, f.name))


# Where frames come from ----------------------------------------------------------------------------


class Imports:
    """What the module's names for inspect and sys functions are (`import inspect as i`,
    `from sys import _getframe`), across the whole file."""

    DEFAULT = {"inspect": "inspect", "sys": "sys"}

    def __init__(self):
        self.names = {}

    def note(self, node):
        """Takes in one node of the file's walk (FileLinter walks each tree once)."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    self.names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def qualify(self, node):
        if isinstance(node, ast.Name):
            return self.names.get(node.id, self.DEFAULT.get(node.id))
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value)
            return f"{base}.{node.attr}" if base else None
        return None


_BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException))


def _is_exception_class(node, shadowed):
    """A value that is an exception class (or None), never an instance: a builtin exception by
    name (unless `shadowed(name)`: bound in this scope or an enclosing one), `x.__class__`,
    `type(x)`."""
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    if isinstance(node, ast.Name):
        return node.id in _BUILTIN_EXCEPTIONS and not shadowed(node.id)
    if isinstance(node, ast.Attribute):
        return node.attr == "__class__"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "type" and len(node.args) == 1 and not node.keywords)


def _constant_int(node):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, int)):
        return -node.operand.value
    return None
