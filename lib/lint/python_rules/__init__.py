"""leakgate lint's rules: a static audit of Python sources for the code shapes that keep frames
alive, found with CPython's own `ast` (nothing is imported or run).

leakgate loads this package inside a worker (its files compiled under the names "<leakgate:lint>"
and "<leakgate:lint/MODULE.py>": lib/workloads/harness_loader.h, loadOwnPackage) and calls
`lint_paths`; `python3 lib/lint/python_rules PATH...` runs the same rules on their own, for
debugging (__main__.py).
Standard library only; Python 3.10 and later.

Three rules:

- `own-frame-local`: a local holds something that reaches the function's own frame and is still
  bound when the function exits: the frame itself (inspect.currentframe(), sys._getframe(0),
  inspect.stack()), an exception caught here or its traceback, sys.exc_info() inside one of its
  handlers, or the exception it raises with `raise err`. The frame then refers to itself through
  its locals: a reference cycle that keeps the frame, every caller's frame above it and all
  their locals alive until the cyclic GC runs. A program with gc.disable() never frees them. A
  caller's frame in a local (`inspect.currentframe().f_back`) is no cycle and is not reported.
- `frame-stored`: a frame, a traceback or a caught exception is stored where it outlives the
  call: on an attribute (`setattr` too), into a container that is not a plain local, in a global
  or nonlocal, a class attribute, or the cell of a nested function that may outlive the call (any
  but a helper only ever called by name). A frame pins its f_back chain for as long as that store
  lives. A nested function or class body sees what its enclosing function bound (a free
  variable), and a function sees what a call of the same file passes it (one call level:
  `name(...)`, `self.name(...)`, `cls.name(...)` and `Class.name(...)`), so
  `func._decorator_frame = frame` is found where `frame` came from either.
- `closure-cycle`: a nested function in a reference cycle through its closure: one that reads
  itself (or another nested function that reads it) through its enclosing function's cell, a
  recursive closure; or one stored into the object that it captures (`self.callback = lambda:
  self.x`, `self.handlers.append(cb)`, `obj.handler = inner`), by a cell or a default value.
  The cycle keeps the function and everything it captures alive until the cyclic GC runs. A name
  unbound on every way out (`walk = None` in a `finally:`) empties the cell: no finding.

The decision is made on structured control flow: each statement maps the set of frame-holding
bindings that may be live before it to the set after it; branches merge by union, loops run to a
fixed point, `return`, `raise`, `break` and `continue` travel through the enclosing `finally`
blocks and `except ... as` clean-ups as Python runs them. Exceptions a statement may raise
implicitly are not modelled: a `del` that every explicit path reaches makes a local clean. A call
of a nested helper (only ever called by name) that declares a local `nonlocal` and unbinds it on
every way out counts as a `del` of it.

A module's syntax tree takes about 150 times its source in memory, so a file larger than
PIECE_BYTES (1 MiB; the environment variable LEAKGATE_LINT_PIECE_BYTES overrides it, 0 putting
every file in pieces) is linted in pieces of consecutive top-level statements of about that size,
one piece's tree alive at a time, after a first pass that gathers what the statements read of each
other (PiecewiseLint): the findings are the whole tree's. Where the split or a piece's parse fails,
the file is parsed whole, as a smaller one is.
"""

from __future__ import annotations

import ast
import builtins
import gc
import json
import os
import sys
import threading
import tokenize
import warnings
from collections import deque
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


def shorten(text, limit=70):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def unparse(node):
    try:
        return shorten(ast.unparse(node))
    except Exception:  # noqa: BLE001 - a label only
        return "<expression>"


# Scopes --------------------------------------------------------------------------------------------


class Scope:
    """A module, class, function, lambda or comprehension, with the names it binds and uses."""

    def __init__(self, node, kind, qualname, parent):
        self.node = node
        self.kind = kind  # module, class, function, lambda, comprehension
        self.qualname = qualname
        self.parent = parent
        self.children = []
        self.bound = set()
        self.params = set()
        self.globals = set()
        self.nonlocals = set()
        self.first_use = {}  # name -> Name node: the first read here or in a nested scope
        self.loads = {}  # name -> every Name node that reads it in this scope itself
        self.definitions = set()  # names bound by class, def and import statements
        if parent is not None:
            parent.children.append(self)

    def locals(self):
        return self.bound - self.globals - self.nonlocals

    def binds_locally(self, name):
        """`name in self.locals()` without making the set: a module of many definitions asks it
        once per free name of every function in it."""
        return name in self.bound and name not in self.globals and name not in self.nonlocals

    def free_uses(self):
        """Names read here or below that this scope does not bind, with their first read."""
        uses = {}
        for child in self.children:
            for name, node in child.free_uses().items():
                uses.setdefault(name, node)
        for name, node in self.first_use.items():
            uses.setdefault(name, node)
        if self.kind == "class":  # a class body's names are invisible to the functions in it
            return {name: node for name, node in uses.items() if name not in self.globals}
        return {name: node for name, node in uses.items()
                if name in self.globals or name not in self.bound}


def _function_child_name(parent, name):
    if parent is None or parent.kind == "module":
        return name
    if parent.kind == "class":
        return f"{parent.qualname}.{name}"
    return f"{parent.qualname}.<locals>.{name}"


class ScopeBuilder(ast.NodeVisitor):
    """Builds the scope tree: what each scope binds, declares global and reads."""

    COMPREHENSIONS = {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>",
                      ast.DictComp: "<dictcomp>", ast.GeneratorExp: "<genexpr>"}

    _methods = {}  # node class -> its visit_ function, or generic_visit

    def visit(self, node):
        # As ast.NodeVisitor's, with the method looked up once per node class. The one walk of
        # the tree: what the file linter needs of the whole file is noted on the way.
        cls = node.__class__
        if cls is ast.Call:
            if node.func.__class__ is ast.Name:
                self.called.add(id(node.func))
        elif cls is ast.Assign:
            if (node.value.__class__ is ast.Lambda and len(node.targets) == 1
                    and node.targets[0].__class__ is ast.Name):
                self.lambda_names[id(node.value)] = node.targets[0].id
        elif cls is ast.Import or cls is ast.ImportFrom:
            self.imports.note(node)
        method = self._methods.get(node.__class__)
        if method is None:
            method = getattr(ScopeBuilder, "visit_" + node.__class__.__name__, ScopeBuilder.generic_visit)
            self._methods[node.__class__] = method
        method(self, node)

    def generic_visit(self, node):
        # As ast.NodeVisitor's, over child_nodes: the leaves bind and read nothing.
        for child in child_nodes(node):
            self.visit(child)

    def visit_Constant(self, node):
        pass  # no children; ast.NodeVisitor's own visit_Constant looks for visit_Num and the like

    def __init__(self, tree, imports=None):
        # The file's names for inspect and sys functions. A file linted in pieces passes the one
        # Imports all its pieces note into, in the file's order.
        self.imports = Imports() if imports is None else imports
        self.called = set()  # ids of the Name nodes that are called: `helper(...)`
        self.lambda_names = {}  # id of a lambda -> the one name it is assigned to
        self.scopes = {}  # node -> Scope
        self.current = None  # the module scope has no parent
        self.module = self.current = self._enter(tree, "module", "<module>")
        for statement in tree.body:
            self.visit(statement)

    def _enter(self, node, kind, qualname):
        scope = Scope(node, kind, qualname, self.current)
        self.scopes[node] = scope
        return scope

    def _bind_name(self, name):
        self.current.bound.add(name)

    def _within(self, scope, visit):
        saved, self.current = self.current, scope
        try:
            visit()
        finally:
            self.current = saved

    def _arguments(self, args):
        # Defaults and annotations belong to the enclosing scope.
        for default in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
            self.visit(default)

    def _parameter_names(self, args):
        names = [a.arg for a in [*getattr(args, "posonlyargs", []), *args.args, *args.kwonlyargs]]
        if args.vararg:
            names.append(args.vararg.arg)
        if args.kwarg:
            names.append(args.kwarg.arg)
        return names

    def _function(self, node):
        for decorator in node.decorator_list:
            self.visit(decorator)
        self._arguments(node.args)
        self._bind_name(node.name)
        self.current.definitions.add(node.name)
        scope = self._enter(node, "function", _function_child_name(self.current, node.name))
        scope.params.update(self._parameter_names(node.args))
        scope.bound.update(scope.params)
        self._within(scope, lambda: [self.visit(statement) for statement in node.body])

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Lambda(self, node):
        self._arguments(node.args)
        scope = self._enter(node, "lambda", _function_child_name(self.current, "<lambda>"))
        scope.params.update(self._parameter_names(node.args))
        scope.bound.update(scope.params)
        self._within(scope, lambda: self.visit(node.body))

    def visit_ClassDef(self, node):
        for expression in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
            self.visit(expression)
        self._bind_name(node.name)
        self.current.definitions.add(node.name)
        scope = self._enter(node, "class", _function_child_name(self.current, node.name))
        self._within(scope, lambda: [self.visit(statement) for statement in node.body])

    def _comprehension(self, node):
        # The first iterable is evaluated in the enclosing scope.
        self.visit(node.generators[0].iter)
        name = self.COMPREHENSIONS[type(node)]
        scope = self._enter(node, "comprehension", f"{self.current.qualname}.{name}")

        def body():
            for index, generator in enumerate(node.generators):
                self.visit(generator.target)
                if index:
                    self.visit(generator.iter)
                for condition in generator.ifs:
                    self.visit(condition)
            if isinstance(node, ast.DictComp):
                self.visit(node.key)
                self.visit(node.value)
            else:
                self.visit(node.elt)

        self._within(scope, body)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_NamedExpr(self, node):
        self.visit(node.value)
        scope = self.current
        while scope.kind == "comprehension":  # a walrus binds in the enclosing function
            scope = scope.parent
        scope.bound.add(node.target.id)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self.current.first_use.setdefault(node.id, node)
            self.current.loads.setdefault(node.id, []).append(node)
        else:
            self._bind_name(node.id)

    def visit_Global(self, node):
        self.current.globals.update(node.names)

    def visit_Nonlocal(self, node):
        self.current.nonlocals.update(node.names)

    def visit_Import(self, node):
        for alias in node.names:
            self._bind_name(alias.asname or alias.name.split(".")[0])
            self.current.definitions.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node):
        for alias in node.names:
            if alias.name != "*":
                self._bind_name(alias.asname or alias.name)
                self.current.definitions.add(alias.asname or alias.name)

    def visit_ExceptHandler(self, node):
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._bind_name(node.name)
        for statement in node.body:
            self.visit(statement)

    def visit_MatchAs(self, node):
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self._bind_name(node.name)

    def visit_MatchStar(self, node):
        if node.name:
            self._bind_name(node.name)

    def visit_MatchMapping(self, node):
        self.generic_visit(node)
        if node.rest:
            self._bind_name(node.rest)


# Walking trees ------------------------------------------------------------------------------------

# Node-valued fields by their ASDL type, read from each class's signature (`BinOp(expr left,
# operator op, expr right)`, the same on 3.10 to 3.13). Names and constants are no nodes, and the
# context, operator and comparison singletons (Load, Add, Eq...) are read from their parent by
# the rules: ast.walk and ast.iter_child_nodes visit those too. Each class gets a function made
# for its fields (no getattr and isinstance per field): the walks are about three times as fast.
_LEAF_TYPES = frozenset({"identifier", "string", "constant", "int", "expr_context", "operator",
                         "cmpop", "unaryop", "boolop", "type_ignore"})
# Lists that may hold None: `{**d}`'s key, a keyword-only parameter without a default.
_LISTS_WITH_NONE = frozenset({("Dict", "keys"), ("arguments", "kw_defaults")})
_CHILDREN = {}


def _children_function(cls):
    signature = (cls.__doc__ or "").split("\n")[0]
    inside = signature[signature.find("(") + 1:signature.rfind(")")] if "(" in signature else ""
    fields = [part.split() for part in inside.split(",") if part.strip()]
    if [name for _, name in fields] != list(cls._fields):
        return _generic_children  # a signature this does not read: ast's own way
    lines = ["def children(node):", "    out = []"]
    for kind, name in fields:
        base = kind.rstrip("*?")
        if base in _LEAF_TYPES:
            continue
        if kind.endswith("*"):
            if (cls.__name__, name) in _LISTS_WITH_NONE:
                lines.append(f"    out.extend([item for item in node.{name} if item is not None])")
            else:
                lines.append(f"    out.extend(node.{name})")
        elif kind.endswith("?"):
            lines.append(f"    if node.{name} is not None: out.append(node.{name})")
        else:
            lines.append(f"    out.append(node.{name})")
    lines.append("    return out")
    namespace = {}
    exec(compile("\n".join(lines), f"<leakgate:lint children of {cls.__name__}>", "exec"), namespace)
    return namespace["children"]


def _generic_children(node):
    return [child for child in ast.iter_child_nodes(node)
            if not isinstance(child, (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop,
                                      ast.boolop))]


def child_nodes(node):
    """The node's children that the rules look at, in field order (ast.iter_child_nodes less
    the leaves above), as a list."""
    function = _CHILDREN.get(node.__class__)
    if function is None:
        function = _CHILDREN[node.__class__] = _children_function(node.__class__)
    return function(node)


def walk(node):
    """Every node under `node`, itself first, breadth first as ast.walk orders them (less the
    leaves child_nodes leaves out)."""
    pending = deque([node])
    while pending:
        current = pending.popleft()
        pending.extend(child_nodes(current))
        yield current


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


# The flow analysis -------------------------------------------------------------------------------


class _FunctionContext:
    """The function's exits: every live own-frame binding there is a finding."""

    def __init__(self, analyzer):
        self.analyzer = analyzer

    def take(self, how, state, node):
        if how != "implicit":  # an exception a statement may raise is not an exit we model
            self.analyzer.check_exit(state, how, node)
        return None


class _LoopContext:
    def __init__(self):
        self.breaks = []
        self.continues = []

    def take(self, how, state, node):
        if how == "break":
            self.breaks.append(state)
            return None
        if how == "continue":
            self.continues.append(state)
            return None
        return state


class _FinallyContext:
    """Holds every way out of a try body and its handlers until the finally block has run."""

    def __init__(self):
        self.pending = []

    def take(self, how, state, node):
        self.pending.append((how, state, node))
        return None


class _HandlerContext:
    """A try body with except handlers: an explicit `raise` and any statement of the body (an
    "implicit" raise) may enter a handler."""

    def __init__(self, catches_all):
        self.catches_all = catches_all
        self.entries = []

    def take(self, how, state, node):
        if how in ("raise", "implicit"):
            self.entries.append(state)
            return None if self.catches_all else state
        return state


class _CleanupContext:
    """`except E as name:` runs `del name` on every way out of the handler."""

    def __init__(self, name):
        self.name = name

    def take(self, how, state, node):
        return without(state, self.name)


class FlowAnalyzer:
    """Runs the statements of one scope (function, module or class body) over frame states."""

    def __init__(self, linter, scope, captured, free=None, helper_clears=None, parameters=None):
        self.linter = linter
        # Parameters that some call in the file passes a frame-reaching value: name -> kinds, as
        # seen from this function (a caller's frame, an exception a caller handles).
        self.parameters = parameters or {}
        self.scope = scope
        self.captured = captured  # locals read by nested functions: reported as closures instead
        # Free variables that an enclosing function bound to frame-reaching values: name -> kinds.
        self.free = free or {}
        # Nested helpers (only ever called by name) that unbind some of this scope's locals on
        # every way out, through `nonlocal`: helper name -> the names a call leaves unbound.
        self.helper_clears = helper_clears or {}
        self.stack = [_FunctionContext(self)]
        self.ever = {}  # name -> every binding it ever had, for the closure rule
        # Inside one of this function's except handlers, sys.exc_info() is the exception caught
        # here, whose traceback starts at this frame; elsewhere it is a caller's.
        self.handler_depth = 0

    # Exits

    def exit(self, how, state, node):
        for context in reversed(self.stack):
            state = context.take(how, state, node)
            if state is None:
                return

    def check_exit(self, state, how, node):
        if state is None:
            return
        if how == "raise":
            exit_text = f"raises at line {node.lineno}"
        elif how == "return" and node is not None:
            exit_text = f"returns at line {node.lineno}"
        else:
            exit_text = "ends"
        for name, bindings in sorted(state.items()):
            if name in self.captured:
                continue
            for binding in sorted(bindings):
                if self.scope.kind == "module" and binding.kind not in OWN_KINDS:
                    self.linter.stored(self.scope, binding.line, binding.column, name,
                                       f"module global `{name}`", binding.source, binding.kind)
                elif binding.kind in OWN_KINDS:
                    self.linter.own_local(self.scope, name, binding, exit_text)

    # Values

    def kinds(self, node, state):
        """The kinds of frame-reaching values `node` may evaluate to (empty: none)."""
        if isinstance(node, ast.Name):
            if node.id in state:
                return frozenset(binding.kind for binding in state[node.id])
            return self.free.get(node.id, frozenset())
        if isinstance(node, ast.Call):
            return self._call_kinds(node, state)
        if isinstance(node, ast.Attribute):
            return frozenset(ATTRIBUTE_KIND[(kind, node.attr)]
                             for kind in self.kinds(node.value, state)
                             if (kind, node.attr) in ATTRIBUTE_KIND)
        if isinstance(node, ast.Subscript):
            return self._subscript_kinds(node, state)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return self._holding(node.elts, state)
        if isinstance(node, ast.Dict):
            return self._holding([n for n in [*node.keys, *node.values] if n is not None], state)
        if isinstance(node, ast.Starred):
            return self.kinds(node.value, state)
        if isinstance(node, ast.IfExp):
            return self.kinds(node.body, state) | self.kinds(node.orelse, state)
        if isinstance(node, ast.BoolOp):
            return frozenset().union(*(self.kinds(value, state) for value in node.values))
        if isinstance(node, ast.NamedExpr):
            return self.kinds(node.value, state)
        return frozenset()

    def _holding(self, elements, state):
        inner = frozenset().union(*(self.kinds(element, state) for element in elements))
        if inner & OWN_KINDS:
            return frozenset({"holds_own"})
        if inner:
            return frozenset({"holds_caller"})
        return frozenset()

    def _call_kinds(self, node, state):
        name = self.linter.imports.qualify(node.func)
        if name == "inspect.currentframe" and not node.args:
            return frozenset({"frame"})
        if name == "sys._getframe":
            depth = _constant_int(node.args[0]) if node.args else 0
            # A depth that is not a constant is taken to be a caller's (depth 0 is rarely computed).
            return frozenset({"frame" if depth == 0 else "caller"})
        if name == "inspect.stack":
            return frozenset({"stack"})
        if name == "inspect.trace":
            return frozenset({"stack" if self.handler_depth else "callers"})
        if name in ("inspect.getouterframes", "inspect.getinnerframes") and node.args:
            inner = self.kinds(node.args[0], state)
            if inner & OWN_KINDS:
                return frozenset({"stack"})
            return frozenset({"callers"}) if inner else frozenset()
        if name == "sys.exc_info":
            return frozenset({"exc_info" if self.handler_depth else "other_exc_info"})
        if name == "sys.exception":
            return frozenset({"exception" if self.handler_depth else "other_exception"})
        if isinstance(node.func, ast.Attribute) and node.func.attr == "with_traceback":
            # `e.with_traceback(None)` drops the traceback: the usual way to keep an exception
            # without its frames.
            dropped = (len(node.args) == 1 and not node.keywords
                       and isinstance(node.args[0], ast.Constant) and node.args[0].value is None)
            if not dropped and "exception" in self.kinds(node.func.value, state):
                return frozenset({"exception"})
        return frozenset()

    def _subscript_kinds(self, node, state):
        out = set()
        index = node.slice
        position = _constant_int(index)
        for kind in self.kinds(node.value, state):
            if kind in ("exc_info", "other_exc_info"):
                prefix = "" if kind == "exc_info" else "other_"
                if position is None:
                    out.add(kind)
                elif position in (1, -2):
                    out.add(prefix + "exception")
                elif position in (2, -1):
                    out.add(prefix + "traceback")
            elif kind in ("stack", "callers"):
                if isinstance(index, ast.Slice):
                    lower = _constant_int(index.lower) if index.lower is not None else 0
                    out.add("stack" if kind == "stack" and lower == 0 else "callers")
                elif kind == "stack" and position == 0:
                    out.add("frame_info")
                else:
                    out.add("caller_info")
            elif kind in ("frame_info", "caller_info") and position == 0:
                out.add("frame" if kind == "frame_info" else "caller")
        return frozenset(out)

    # Bindings and stores

    def binding(self, kind, node, value):
        source = unparse(value) if value is not None else ""
        return Binding(kind, node.lineno, node.col_offset + 1, source)

    def bind(self, name, kinds, target, value, state):
        if name in self.scope.globals or name in self.scope.nonlocals:
            if kinds:
                where = "global" if name in self.scope.globals else "nonlocal"
                self.stored_value(target, name, kinds, value, f"{where} `{name}`")
            return state
        if self.scope.kind == "class":
            if kinds:
                self.stored_value(target, f"{self.scope.qualname}.{name}", kinds, value,
                                  f"class attribute `{name}`")
            return state
        if not kinds:
            return without(state, name)
        bindings = frozenset(self.binding(kind, target, value) for kind in kinds)
        self.ever.setdefault(name, set()).update(bindings)
        out = dict(state)
        out[name] = bindings
        return out

    def stored_value(self, node, name, kinds, value, where):
        kind = sorted(kinds, key=lambda k: (k not in OWN_KINDS, k))[0]
        self.linter.stored(self.scope, node.lineno, node.col_offset + 1, name, where, unparse(value),
                           kind)

    def plain_local(self, name):
        if name in self.scope.globals or name in self.scope.nonlocals:
            return False
        if self.scope.kind == "module":
            return True
        return (self.scope.kind == "function" and name in self.scope.bound
                and name not in self.scope.params)

    def store_into(self, receiver, kinds, site, value, state):
        """`receiver` (a container) is given a frame-reaching value."""
        if not kinds:
            return state
        if isinstance(receiver, ast.Name) and self.plain_local(receiver.id):
            holds = "holds_own" if kinds & OWN_KINDS else "holds_caller"
            record = self.binding(holds, site, value)
            self.ever.setdefault(receiver.id, set()).add(record)
            out = dict(state)
            out[receiver.id] = state.get(receiver.id, frozenset()) | {record}
            return out
        self.stored_value(site, unparse(receiver), kinds, value, f"container `{unparse(receiver)}`")
        return state

    def assign(self, target, kinds, value, state, positional=None):
        """Binds `target` to a value of `kinds`; `value` is the expression, when it maps 1:1."""
        if isinstance(target, ast.Name):
            return self.bind(target.id, kinds, target, value, state)
        if isinstance(target, ast.Starred):
            return self.assign(target.value, kinds, value, state)
        if isinstance(target, ast.Attribute):
            state = self.effects(target.value, state)
            if kinds and target.attr not in CHAINING_ATTRIBUTES:
                shown = unparse(target)
                self.stored_value(target, shown, kinds, value, f"attribute `{shown}`")
            return state
        if isinstance(target, ast.Subscript):
            state = self.effects(target.value, state)
            state = self.effects(target.slice, state)
            return self.store_into(target.value, kinds, target, value, state)
        if isinstance(target, (ast.Tuple, ast.List)):
            elements = target.elts
            starred = any(isinstance(element, ast.Starred) for element in elements)
            if (isinstance(value, (ast.Tuple, ast.List)) and not starred
                    and len(value.elts) == len(elements)
                    and not any(isinstance(v, ast.Starred) for v in value.elts)):
                pairs = [(element, self.kinds(v, state), v) for element, v in zip(elements, value.elts)]
            elif kinds & {"exc_info", "other_exc_info"} and len(elements) == 3 and not starred:
                prefix = "" if "exc_info" in kinds else "other_"
                parts = [frozenset(), frozenset({prefix + "exception"}),
                         frozenset({prefix + "traceback"})]
                items = [ast.Subscript(value=value, slice=ast.Constant(index), ctx=ast.Load())
                         for index in range(3)]  # shown as `sys.exc_info()[2]`
                pairs = list(zip(elements, parts, items))
            else:
                pairs = [(element, frozenset(), None) for element in elements]
            for element, element_kinds, element_value in pairs:
                state = self.assign(element, element_kinds, element_value, state)
            return state
        return state

    def effects(self, node, state):
        """What evaluating an expression does to the state: walrus bindings and containers filled
        by method calls. Nested scopes (lambdas, comprehensions) are analysed on their own."""
        if node is None or state is None:
            return state
        pending = [node]
        while pending:
            current = pending.pop()
            if isinstance(current, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                    ast.GeneratorExp)):
                continue
            if isinstance(current, ast.NamedExpr):
                state = self.effects(current.value, state)
                state = self.bind(current.target.id, self.kinds(current.value, state), current.target,
                                  current.value, state)
                continue
            if isinstance(current, ast.Call):
                self.linter.passes(current, self, state)
            if isinstance(current, ast.Call) and isinstance(current.func, ast.Name):
                for name in self.helper_clears.get(current.func.id, ()):
                    state = without(state, name)
                if (current.func.id == "setattr" and "setattr" not in self.linter.imports.names
                        and "setattr" not in self.scope.bound and len(current.args) == 3
                        and not current.keywords):
                    receiver, attribute, value = current.args
                    kinds = self.kinds(value, state)
                    shown_attribute = (attribute.value if isinstance(attribute, ast.Constant)
                                       and isinstance(attribute.value, str) else "<name>")
                    if kinds and shown_attribute not in CHAINING_ATTRIBUTES:
                        shown = f"{unparse(receiver)}.{shown_attribute}"
                        self.stored_value(current, shown, kinds, value, f"attribute `{shown}` (setattr)")
            if isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute):
                method = current.func.attr
                receiver = current.func.value
                if method in STORING_METHODS:
                    arguments = [*current.args, *[k.value for k in current.keywords]]
                    kinds = frozenset().union(*(self.kinds(a, state) for a in arguments))
                    shown = arguments[-1] if arguments else current
                    state = self.store_into(receiver, kinds, current, shown, state)
                elif method == "clear" and isinstance(receiver, ast.Name) and not current.args:
                    bindings = state.get(receiver.id, frozenset())
                    if bindings and all(b.kind in ("holds_own", "holds_caller") for b in bindings):
                        state = without(state, receiver.id)
            pending.extend(reversed(list(child_nodes(current))))
        return state

    # Conditions

    @staticmethod
    def _none_test(test):
        """(name, whether the test is true when the name is None or empty), or (None, None)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            name, when_true = FlowAnalyzer._none_test(test.operand)
            return (name, None if when_true is None else not when_true)
        if isinstance(test, ast.Name):
            return test.id, False
        if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "len"
                and len(test.args) == 1 and isinstance(test.args[0], ast.Name)):
            return test.args[0].id, False
        if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
                and isinstance(test.comparators[0], ast.Constant)
                and test.comparators[0].value is None):
            if isinstance(test.ops[0], (ast.Is, ast.Eq)):
                return test.left.id, True
            if isinstance(test.ops[0], (ast.IsNot, ast.NotEq)):
                return test.left.id, False
        return None, None

    def narrow(self, test, state):
        """(state where the test is true, state where it is false): a name tested against None
        (or for emptiness) holds nothing on the branch where it is None."""
        name, when_true = self._none_test(test)
        if name is None or state is None or name not in state:
            return state, state
        cleared = without(state, name)
        return (cleared, state) if when_true else (state, cleared)

    @staticmethod
    def _always_true(test):
        return isinstance(test, ast.Constant) and bool(test.value)

    # Statements

    def run_block(self, statements, state):
        for statement in statements:
            if state is None:
                break
            state = self.run(statement, state)
        return state

    def run(self, node, state):
        # Any statement may raise: the state before it reaches the enclosing handlers, through the
        # finally blocks and `except ... as` clean-ups in between.
        if any(isinstance(context, _HandlerContext) for context in self.stack):
            self.exit("implicit", state, node)
        method = getattr(self, "run_" + type(node).__name__, None)
        if method is None:
            return self.effects_of_children(node, state)
        return method(node, state)

    def effects_of_children(self, node, state):
        for child in child_nodes(node):
            if isinstance(child, ast.expr):
                state = self.effects(child, state)
        return state

    def run_Expr(self, node, state):
        return self.effects(node.value, state)

    def run_Assign(self, node, state):
        state = self.effects(node.value, state)
        kinds = self.kinds(node.value, state)
        for target in node.targets:
            state = self.assign(target, kinds, node.value, state)
        return state

    def run_AnnAssign(self, node, state):
        if node.value is None:
            return state
        state = self.effects(node.value, state)
        return self.assign(node.target, self.kinds(node.value, state), node.value, state)

    def run_AugAssign(self, node, state):
        state = self.effects(node.value, state)
        kinds = self.kinds(node.value, state)
        if not kinds:
            return state
        if isinstance(node.target, ast.Name):
            return self.store_into(node.target, kinds, node.target, node.value, state)
        return self.assign(node.target, kinds, node.value, state)

    def run_Delete(self, node, state):
        for target in node.targets:
            if isinstance(target, ast.Name):
                state = without(state, target.id)
            elif isinstance(target, (ast.Tuple, ast.List)):
                for element in target.elts:
                    if isinstance(element, ast.Name):
                        state = without(state, element.id)
            else:
                state = self.effects(target, state)
        return state

    def run_Return(self, node, state):
        state = self.effects(node.value, state)
        self.exit("return", state, node)
        return None

    def run_Raise(self, node, state):
        state = self.effects(node.exc, state)
        state = self.effects(node.cause, state)
        # `raise err` puts this frame in err's traceback while the local `err` still names it.
        # (`raise Error` with a class defined or imported here raises a new instance: no cycle.)
        name = node.exc.id if isinstance(node.exc, ast.Name) else None
        if (name is not None and self.scope.kind == "function" and self.scope.binds_locally(name)
                and name not in self.scope.definitions
                and not any(b.kind in OWN_KINDS for b in state.get(name, ()))
                and not self._names_a_class_only(name)):
            state = dict(state)
            state[name] = state.get(name, frozenset()) | {self.binding("raised", node.exc, node.exc)}
        self.exit("raise", state, node)
        return None

    def _shadowed(self, name):
        scope = self.scope
        while scope is not None:
            if scope.kind != "class" and name in scope.bound:
                return True
            scope = scope.parent
        return False

    def _names_a_class_only(self, name):
        """Whether every binding of local `name` in this function is an exception class (a
        builtin one by name, `x.__class__`, `type(x)`) or None: `raise name` then raises a new
        instance that no local names. Flow-insensitive; a parameter or any other binding (for,
        with, except, unpacking, walrus, augmented) is not known to be a class."""
        if name in self.scope.params:
            return False
        if any(isinstance(node, ast.Nonlocal) and name in node.names
               for node in walk(self.scope.node)):
            return False  # a nested function rebinds it
        found = False
        pending = list(self.scope.node.body)
        while pending:
            node = pending.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                                 ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                if getattr(node, "name", None) == name:
                    return False
                continue
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets):
                if not all(isinstance(t, ast.Name) for t in node.targets):
                    return False
                if not _is_exception_class(node.value, self._shadowed):
                    return False
                found = True
            elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                return False  # any other binding: unpacking, for, with, walrus, augmented
            elif isinstance(node, ast.ExceptHandler) and node.name == name:
                return False
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                if any((alias.asname or alias.name.split(".")[0]) == name for alias in node.names):
                    return False
            if isinstance(node, ast.Assign):
                # The targets were judged above; only the value may hold other bindings.
                pending.append(node.value)
                pending.extend(t for t in node.targets if not isinstance(t, ast.Name))
                continue
            pending.extend(child_nodes(node))
        return found

    def run_Break(self, node, state):
        self.exit("break", state, node)
        return None

    def run_Continue(self, node, state):
        self.exit("continue", state, node)
        return None

    def run_If(self, node, state):
        state = self.effects(node.test, state)
        when_true, when_false = self.narrow(node.test, state)
        return merge([self.run_block(node.body, when_true), self.run_block(node.orelse, when_false)])

    def run_Assert(self, node, state):
        state = self.effects(node.test, state)
        return self.narrow(node.test, state)[0]

    def _loop(self, node, state, enter_body):
        """Runs a loop to a fixed point. `enter_body(head)` gives the state at the top of the body
        and the state when the loop ends normally."""
        head = state
        for _ in range(20):
            context = _LoopContext()
            self.stack.append(context)
            body_state, _ = enter_body(head)
            end = self.run_block(node.body, body_state)
            self.stack.pop()
            new_head = merge([state, end, *context.continues])
            if new_head == head:
                break
            head = new_head
        _, finished = enter_body(head)
        normal = self.run_block(node.orelse, finished) if finished is not None else None
        return merge([normal, *context.breaks])

    def run_For(self, node, state):
        state = self.effects(node.iter, state)
        element = frozenset()
        for kind in self.kinds(node.iter, state):
            if kind in ("stack", "callers"):
                element |= {"caller_info"}  # at the loop's end it names the outermost record

        def enter(head):
            if head is None:
                return None, None
            return self.assign(node.target, element, node.iter, head), head

        return self._loop(node, state, enter)

    run_AsyncFor = run_For

    def run_While(self, node, state):
        def enter(head):
            if head is None:
                return None, None
            head = self.effects(node.test, head)
            when_true, when_false = self.narrow(node.test, head)
            return when_true, (None if self._always_true(node.test) else when_false)

        return self._loop(node, state, enter)

    def run_With(self, node, state):
        for item in node.items:
            state = self.effects(item.context_expr, state)
            if item.optional_vars is not None:
                state = self.assign(item.optional_vars, frozenset(), None, state)
        return self.run_block(node.body, state)

    run_AsyncWith = run_With

    @staticmethod
    def _catches_all(handler):
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        return any(name is None
                   or (isinstance(name, ast.Name) and name.id in ("Exception", "BaseException"))
                   for name in names)

    def run_Try(self, node, state):
        finally_context = _FinallyContext() if node.finalbody else None
        if finally_context:
            self.stack.append(finally_context)
        handler_context = None
        if node.handlers:
            handler_context = _HandlerContext(any(self._catches_all(h) for h in node.handlers))
            handler_context.entries.append(state)
            self.stack.append(handler_context)
        body = self.run_block(node.body, state)
        if handler_context:
            self.stack.pop()
        outcomes = [self.run_block(node.orelse, body) if body is not None else None]
        if handler_context:
            entry = merge(handler_context.entries)
            for handler in node.handlers:
                handler_state = entry
                if handler.name:
                    # Not through bind(): Python deletes the name when the handler ends, so it is
                    # neither a store nor something a closure could keep.
                    handler_state = dict(handler_state)
                    handler_state[handler.name] = frozenset({self.binding("exception", handler, None)})
                    self.stack.append(_CleanupContext(handler.name))
                self.handler_depth += 1
                end = self.run_block(handler.body, handler_state)
                self.handler_depth -= 1
                if handler.name:
                    self.stack.pop()
                    end = without(end, handler.name)
                outcomes.append(end)
        normal = merge(outcomes)
        if not finally_context:
            return normal
        self.stack.pop()
        by_way = {}
        for how, pending_state, pending_node in finally_context.pending:
            states, first_node = by_way.get(how, ([], pending_node))
            states.append(pending_state)
            by_way[how] = (states, first_node)
        for how, (states, first_node) in by_way.items():
            after = self.run_block(node.finalbody, merge(states))
            if after is not None:
                self.exit(how, after, first_node)
        return self.run_block(node.finalbody, normal) if normal is not None else None

    run_TryStar = run_Try

    def run_Match(self, node, state):
        state = self.effects(node.subject, state)
        outcomes = []
        irrefutable = False
        for case in node.cases:
            case_state = state
            for name_node in walk(case.pattern):
                for name in (getattr(name_node, "name", None), getattr(name_node, "rest", None)):
                    if isinstance(name, str):
                        case_state = without(case_state, name)
            case_state = self.effects(case.guard, case_state)
            outcomes.append(self.run_block(case.body, case_state))
            pattern = case.pattern
            if case.guard is None and isinstance(pattern, ast.MatchAs) and pattern.pattern is None:
                irrefutable = True
        if not irrefutable:
            outcomes.append(state)
        return merge(outcomes)

    def _definition(self, node, state):
        for expression in node.decorator_list:
            state = self.effects(expression, state)
        return self.bind(node.name, frozenset(), node, None, state)

    run_FunctionDef = run_AsyncFunctionDef = run_ClassDef = _definition

    def run_Import(self, node, state):
        for alias in node.names:
            state = self.bind(alias.asname or alias.name.split(".")[0], frozenset(), node, None, state)
        return state

    def run_ImportFrom(self, node, state):
        for alias in node.names:
            if alias.name != "*":
                state = self.bind(alias.asname or alias.name, frozenset(), node, None, state)
        return state

    def run_Global(self, node, state):
        return state

    run_Nonlocal = run_Pass = run_Global

    # The whole scope

    def analyze(self):
        body = self.scope.node.body
        start = {}
        for name, kinds in self.parameters.items():
            # No source: the value is the parameter's, given by a call elsewhere in the file.
            start[name] = frozenset(Binding(kind, self.scope.node.lineno, self.scope.node.col_offset + 1, "")
                                    for kind in kinds)
            self.ever.setdefault(name, set()).update(start[name])
        end = self.run_block(body, start)
        if end is not None:
            self.check_exit(end, "end", None)


class _Silent:
    """A linter that keeps no findings: for the flow of a helper run only to learn its exits."""

    def __init__(self, imports):
        self.imports = imports

    def own_local(self, *args):
        pass

    stored = closure = passes = own_local


class _NonlocalClearing(FlowAnalyzer):
    """Runs a nested helper to learn which of the enclosing function's locals, declared
    `nonlocal` in it, are unbound on every way out of it (return, the end, or an explicit raise)."""

    HELD = Binding("enclosing", 0, 0, "")

    def __init__(self, imports, scope, names):
        super().__init__(_Silent(imports), scope, set())
        self.names = names
        self.exits = []

    def check_exit(self, state, how, node):
        if state is not None:
            self.exits.append(state)

    def bind(self, name, kinds, target, value, state):
        if name in self.names:
            if not kinds:
                return without(state, name)
            out = dict(state)
            out[name] = frozenset({self.HELD})
            return out
        return super().bind(name, kinds, target, value, state)

    def cleared(self):
        end = self.run_block(self.scope.node.body, {name: frozenset({self.HELD}) for name in self.names})
        if end is not None:
            self.exits.append(end)
        if not self.exits:  # it never returns: nothing is learned
            return set()
        return {name for name in self.names if all(name not in state for state in self.exits)}


# The linter ---------------------------------------------------------------------------------------


class Finding(NamedTuple):
    rule: str
    file: str
    line: int
    column: int
    function: str
    name: str
    message: str
    fix: str


def sorted_findings(findings):
    return sorted(findings, key=lambda f: (f.line, f.column, f.rule, f.name))


class FileLinter:
    def __init__(self, path, tree):
        self.path = path
        self.tree = tree
        # The one walk of the whole tree: the scopes, and the file's imports, calls by name and
        # lambdas bound to a name.
        self.builder = ScopeBuilder(tree)
        self.imports = self.builder.imports
        self.called = self.builder.called
        self.lambda_names = self.builder.lambda_names
        self.findings = {}  # (rule, line, column, name) -> Finding, first one kept

    def _add(self, finding):
        key = (finding.rule, finding.line, finding.column, finding.name)
        self.findings.setdefault(key, finding)

    def own_local(self, scope, name, binding, exit_text):
        assigned = f"`{name}` = `{binding.source}` (line {binding.line})"
        if binding.kind == "raised":
            message = (f"`raise {name}` (line {binding.line}) raises the exception that local `{name}` "
                       f"still names: raising puts the frame of `{scope.qualname}` in its "
                       f"__traceback__, so the frame reaches itself through its locals, a reference "
                       f"cycle that keeps it, every caller's frame and all their locals alive until "
                       f"the cyclic GC runs")
        elif scope.kind == "module":
            message = (f"module global {assigned} holds {describe(binding.kind, scope)}: the module's "
                       f"frame reaches itself through its globals, a reference cycle that keeps it and "
                       f"the frames that imported it alive as long as the module lives")
        else:
            message = (f"local {assigned} holds {describe(binding.kind, scope)}, and is still bound "
                       f"when `{scope.qualname}` {exit_text}: the frame reaches itself through its "
                       f"locals, a reference cycle that keeps it, every caller's frame and all their "
                       f"locals alive until the cyclic GC runs")
        self._add(Finding(OWN_FRAME_LOCAL, self.path, binding.line, binding.column, scope.qualname,
                          name, message, own_fix(binding.kind)))

    def stored(self, scope, line, column, name, where, value, kind):
        message = (f"{where} is given `{value}`, {describe(kind, scope)}, in `{scope.qualname}`: the "
                   f"store outlives the call and pins the frame's f_back chain, every caller's frame "
                   f"and all their locals, as long as it lives")
        self._add(Finding(FRAME_STORED, self.path, line, column, scope.qualname, name, message,
                          FIX_STORED))

    def closure(self, scope, child, name, use, bindings):
        kind = sorted((b.kind for b in bindings), key=lambda k: (k not in OWN_KINDS, k))[0]
        source = sorted(bindings)[0]
        nested = "a lambda" if child.kind == "lambda" else f"nested function `{child.qualname}`"
        if source.source:
            captured = f"local `{name}` = `{source.source}` (line {source.line})"
        else:
            captured = f"parameter `{name}` (given it by a call in this file)"
        message = (f"{nested} captures {captured} of `{scope.qualname}`, {describe(kind, scope)}: "
                   f"the closure cell keeps it, and every frame it pins, alive as long as the "
                   f"function object lives")
        self._add(Finding(FRAME_STORED, self.path, use.lineno, use.col_offset + 1, scope.qualname, name,
                          message, FIX_CLOSURE))

    def run(self):
        self.ever = {}  # scope -> its analyzer's `ever`: what a nested scope finds in its free names
        self.calls = []  # (callee name, how it is called, {position or keyword: kinds})
        scopes = self.analysed_scopes()
        self.first_round(scopes)
        self.second_round(scopes, self.calls)
        return sorted_findings(self.findings.values())

    def analysed_scopes(self):
        """The scopes analysed on their own, enclosing scopes first (a lambda's or a
        comprehension's flow is part of its enclosing scope's)."""
        return [scope for scope in self.builder.scopes.values()
                if scope.kind not in ("lambda", "comprehension")]

    def first_round(self, scopes):
        for scope in scopes:
            self._analyze(scope, {})
            if scope.kind == "function":
                ClosureCycles(self, scope).run()

    def second_round(self, scopes, calls):
        """Once more, for each function that some call of the file (`calls`, all the first
        round's) passes a frame-reaching value, with those parameters bound (one call level),
        and the scopes inside it."""
        seeded = {scope: self._parameter_kinds(scope, calls) for scope in scopes
                  if scope.kind == "function"}
        again = {scope for scope, parameters in seeded.items() if parameters}
        for scope in scopes:
            if scope in again or scope.parent in again:
                again.add(scope)  # what is nested in it sees its parameters as free names
                self._analyze(scope, seeded.get(scope) or {})

    def _analyze(self, scope, parameters):
        captures = self._captures(scope)
        analyzer = FlowAnalyzer(self, scope, set(captures), self._free_kinds(scope),
                                self._helper_clears(scope), parameters)
        analyzer.analyze()
        self.ever[scope] = analyzer.ever
        for name, (child, use) in sorted(captures.items()):
            bindings = analyzer.ever.get(name)
            if bindings:
                self.closure(scope, child, name, use, bindings)

    def passes(self, call, analyzer, state):
        """Records what a call passes that reaches frames: for the parameters of the callee."""
        passed = {}
        for position, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                break
            kinds = analyzer.kinds(argument, state)
            if kinds:
                passed[position] = kinds
        for keyword in call.keywords:
            if keyword.arg is not None:
                kinds = analyzer.kinds(keyword.value, state)
                if kinds:
                    passed[keyword.arg] = kinds
        if not passed:
            return
        # Which function a call reaches, as far as one file tells: `name(...)` a function of that
        # name, `self.name(...)` or `cls.name(...)` a method of that name in any class of the file,
        # `Class.name(...)` that class's. Any other receiver's type is unknown: not followed.
        if isinstance(call.func, ast.Name):
            self.calls.append((call.func.id, "name", None, passed))
        elif isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
            receiver = call.func.value.id
            if receiver in ("self", "cls"):
                self.calls.append((call.func.attr, "instance", None, passed))
            elif receiver[:1].isupper():
                self.calls.append((call.func.attr, "class", receiver, passed))

    def _parameter_kinds(self, scope, calls):
        """The parameters of a function that a call of this file (one of `calls`) passes
        frame-reaching values."""
        node = scope.node
        in_class = scope.parent is not None and scope.parent.kind == "class"
        decorators = {unparse(d) for d in node.decorator_list}
        positional = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
        keywords = set(positional) | {a.arg for a in node.args.kwonlyargs}
        out = {}
        for name, how, owner, passed in calls:
            if name != node.name or (how == "name") == in_class:
                continue
            if how == "class" and scope.parent.node.name != owner:
                continue
            offset = 0
            if in_class and "staticmethod" not in decorators:
                offset = 1 if how == "instance" or "classmethod" in decorators else 0
            for where, kinds in passed.items():
                if isinstance(where, int):
                    if where + offset >= len(positional):
                        continue
                    parameter = positional[where + offset]
                elif where in keywords:
                    parameter = where
                else:
                    continue
                seen = frozenset(AS_ARGUMENT.get(kind, kind) for kind in kinds)
                out[parameter] = out.get(parameter, frozenset()) | seen
        return out

    def _free_kinds(self, scope):
        """The free names of `scope` that the nearest enclosing function binds to frame-reaching
        values, with their kinds there. What reaches the enclosing function's own frame is of kind
        `enclosing`: seen from here it is no self-reference."""
        out = {}
        for name in scope.loads:
            if name in scope.globals or (name in scope.bound and name not in scope.nonlocals):
                continue
            outer = scope.parent
            while outer is not None and (outer.kind == "class" or not outer.binds_locally(name)):
                outer = outer.parent
            if outer is None or outer.kind != "function":
                continue
            kinds = {binding.kind for binding in self.ever.get(outer, {}).get(name, ())}
            if kinds:
                out[name] = frozenset("enclosing" if kind in OWN_KINDS else kind for kind in kinds)
        return out

    def _helper_clears(self, scope):
        """Nested helpers of a function, only ever called by name, that leave some of its locals
        unbound (`nonlocal x` ... `del x` or `x = None`) on every way out: a call to one is then a
        `del` of those names in the function's own flow."""
        if scope.kind != "function":
            return {}
        names = [child.node.name for child in scope.children if child.kind == "function"]
        out = {}
        for child in scope.children:
            if (child.kind != "function" or names.count(child.node.name) != 1
                    or isinstance(child.node, ast.AsyncFunctionDef)
                    or any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in walk(child.node))
                    or self._escapes(scope, child)):
                continue
            shared = child.nonlocals & scope.locals()
            if shared:
                cleared = _NonlocalClearing(self.imports, child, shared).cleared()
                if cleared:
                    out[child.node.name] = cleared
        return out

    def _escapes(self, scope, child):
        """Whether a nested function of `scope` may outlive the call: anything but a helper that
        is only ever called by name in `scope` itself."""
        node = child.node
        if isinstance(node, ast.Lambda):
            name = self.lambda_names.get(id(node))
            if name is None:
                return True
        else:
            if node.decorator_list:
                return True
            name = node.name
        if name in scope.globals or name in scope.nonlocals:
            return True
        if any(id(use) not in self.called for use in scope.loads.get(name, ())):
            return True
        # Another nested function that reads it could hand it on.
        return any(other is not child and name in other.free_uses() for other in scope.children)

    def _captures(self, scope):
        """Locals of a function read by nested functions or lambdas that may outlive the call:
        name -> (child, first read)."""
        if scope.kind != "function":
            return {}
        local_names = scope.locals()
        out = {}

        def visit(child, direct):
            if child.kind in ("function", "lambda"):
                if direct and not self._escapes(scope, child):
                    return
                for name, use in child.free_uses().items():
                    if name in local_names:
                        out.setdefault(name, (child, use))
            else:  # what a comprehension or class body defines is kept in a list or a class
                for grandchild in child.children:
                    visit(grandchild, False)

        for child in scope.children:
            visit(child, True)
        return out


# Closure cycles ----------------------------------------------------------------------------------
#
# A nested function reads what its enclosing function binds through cells: the function's
# __closure__ holds the cell, the cell holds the value. When the value reaches the function back,
# the two are a reference cycle that reference counting never frees, and with it every other cell
# the function holds (a large array it captured) stays alive until the cyclic GC runs: never,
# under gc.disable(). Two shapes make the value reach the function:
#
# - the value is the function itself (or another nested function that reads it): a recursive
#   closure, `def walk(n): ... walk(n - 1)`. Every call of the enclosing function leaves one
#   cycle behind, unless the name is unbound (`walk = None`, `del walk`) on every way out: the
#   cell then holds None.
# - the function is stored into the object it captures (an attribute of it, a container it
#   holds, a registry reached from it): `self.callback = lambda: self.x`, every time the
#   enclosing function runs, unless the name is rebound (the cell then holds something else).
#   A function that holds the object as a default value (`lambda self=self: ...`) is the same
#   cycle through its __defaults__ instead of a cell, and one that no rebinding breaks: it is
#   reported too, whatever the flow. One that captures `weakref.ref(self)` instead is no cycle.
#
# Module and class bodies bind no cells (their names are read as globals or class attributes),
# so only the functions' own code is checked. A nested class that names itself is left out: a
# class is always in cycles of its own (its __mro__, its methods' __class__ cell).

CLOSURE_CYCLE = "closure-cycle"

# Method names that keep a callback in the object they are called on, besides STORING_METHODS: a
# signal's `connect`, a registry's `register`, `register_forward_hook`, `add_done_callback`...
REGISTERING_METHODS = frozenset({"register", "connect", "subscribe"})
REGISTERING_SUFFIXES = ("callback", "callbacks", "hook", "hooks", "handler", "handlers", "listener",
                        "listeners", "observer", "observers")

# Calls whose result keeps its arguments: a partial application, and constructors (a class named
# in CamelCase: `threading.Timer(1, lambda: self.tick())`), except weakref's, which keep them
# weakly. Any other call's result is taken to keep none (`sorted(items, key=lambda i: self.k[i])`).
PARTIALS = frozenset({"functools.partial", "partial", "functools.partialmethod", "partialmethod"})


def _registers(method):
    return (method in STORING_METHODS or method in REGISTERING_METHODS
            or method.startswith("register_")
            or (method.startswith("add_") and method.endswith(REGISTERING_SUFFIXES)))


def _dotted(node):
    """`a.b.c` as text, or None for any other expression."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _keeps_arguments(call):
    name = _dotted(call.func)
    if name is None:
        return False
    if name in PARTIALS:
        return True
    last = name.rsplit(".", 1)[-1]
    if name.startswith("weakref.") or last.startswith("Weak"):
        return False
    return last[:1].isupper() and not last.isupper()  # `Timer`, not a constant's name `CALLBACK`


def _root(node):
    """The name an attribute or subscript chain starts from: `self` for `self.a[k].b`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _reads(node, name):
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for n in walk(node))


def _resolve(scope, name):
    """The scope whose binding of `name` a read in `scope` sees (a class body's names are seen
    by its own statements only), or None for a name no scope binds (a builtin)."""
    current = scope
    while current is not None:
        if name in current.globals:
            while current.parent is not None:
                current = current.parent
            return current
        if ((current is scope or current.kind != "class") and name in current.bound
                and name not in current.nonlocals):
            return current
        current = current.parent
    return None


def _holds_cells(scope):
    """Whether a nested function's read of a name bound in `scope` goes through a cell."""
    return scope is not None and scope.kind not in ("module", "class")


_TRY_STATEMENTS = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)


def _statements(body):
    """The statements of a function body, nested ones (in if, for, try...) after the one holding
    them, not those of nested functions and classes."""
    for statement in body:
        yield statement
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for child in child_nodes(statement):
            if isinstance(child, ast.stmt):
                yield from _statements([child])
            elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                yield from _statements(child.body)


# Expressions whose bodies run in a scope of their own, later or elsewhere.
_NESTED_EXPRESSIONS = frozenset({ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                 ast.GeneratorExp})
_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _expressions(statement):
    """The nodes of the expressions a statement evaluates itself (not those of the statements
    inside it, nor the bodies of lambdas and comprehensions), as a list."""
    if statement.__class__ in _DEFINITIONS:
        pending = list(statement.decorator_list)  # what a definition evaluates that may store
    else:
        # Its own expressions (with items, keywords...), not its blocks: the statements inside,
        # an except handler's, a match case's.
        pending = [child for child in child_nodes(statement)
                   if not isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case))]
    out = []
    while pending:
        node = pending.pop()
        out.append(node)
        if node.__class__ not in _NESTED_EXPRESSIONS:
            pending.extend(child_nodes(node))
    return out


class _Site(NamedTuple):
    """A store of a value into an object reached from a name: `self.cb = value`."""

    statement: ast.stmt
    node: ast.AST  # where it is reported
    root: str  # the name the object is reached from
    shown: str  # the store's target, as written
    where: str  # the store, in words
    values: tuple  # the expressions stored


class _ClosureFlow(FlowAnalyzer):
    """The function's flow for the closure-cycle rule, to learn which cells of a cycle still hold
    their value at its exits. `marks` (id of a statement -> [(name, Binding)]) gives a name a
    binding once the statement has run: the definition of a recursive closure, a store of a
    callback into the object the name holds. Any rebinding of the name (but one that reads it,
    `walk = cache(walk)`) and a `del` drop it, as the frame rules' flow drops a frame."""

    def __init__(self, imports, scope, helper_clears, marks):
        super().__init__(_Silent(imports), scope, set(), helper_clears=helper_clears)
        self.marks = marks
        self.names = {name for pairs in marks.values() for name, _ in pairs}
        self.exits = []

    def kinds(self, node, state):
        return frozenset()  # no frame is followed here: the frame rules' own flow does that

    def run(self, node, state):
        state = super().run(node, state)
        for name, binding in self.marks.get(id(node), ()):
            if state is not None:
                state = dict(state)
                state[name] = state.get(name, frozenset()) | {binding}
        return state

    def bind(self, name, kinds, target, value, state):
        if name in self.names and name in state and value is not None and _reads(value, name):
            return state
        return super().bind(name, kinds, target, value, state)

    def check_exit(self, state, how, node):
        if state is not None:
            self.exits.append(state)

    def live_exits(self):
        end = self.run_block(self.scope.node.body, {})
        if end is not None:
            self.exits.append(end)
        return self.exits


class ClosureCycles:
    """The closure-cycle rule on one function's own code: its recursive closures and the
    callbacks it stores into objects they capture."""

    def __init__(self, linter, scope):
        self.linter = linter
        self.scope = scope
        self.builder = linter.builder
        self._cell_cache = {}
        self._named_cache = {}
        self._only_cache = {}
        self.lambda_statements = {}  # id of a lambda -> the `name = lambda` statement
        # (requirements at an exit: _AnyOf or _LiveCycle, the finding if one exit meets them)
        self.candidates = []
        self.marks = {}  # id of a statement -> [(name, Binding)]

    # What nested functions read

    def cells(self, closure):
        """The names a nested function or lambda reads through cells: name -> (the scope that
        binds it, the first read)."""
        out = self._cell_cache.get(closure)
        if out is None:
            out = {}
            for name, use in closure.free_uses().items():
                if name in closure.globals:
                    continue
                owner = _resolve(closure.parent, name)
                if _holds_cells(owner):
                    out[name] = (owner, use)
            self._cell_cache[closure] = out
        return out

    def named(self, scope):
        """The nested functions and lambdas `scope` binds to a name of its own: name -> scopes."""
        out = self._named_cache.get(scope)
        if out is None:
            out = {}
            for child in scope.children:
                if child.kind == "function":
                    name = child.node.name
                elif child.kind == "lambda":
                    name = self.linter.lambda_names.get(id(child.node))
                else:
                    continue
                if name is not None and scope.binds_locally(name):
                    out.setdefault(name, []).append(child)
            self._named_cache[scope] = out
        return out

    def only_functions(self, scope, name):
        """Whether `scope` binds `name` to nothing but its nested functions: `def name`, `name =
        lambda`, None, or a value that reads the name (`name = wrap(name)`). A name that also
        holds something else (`p = parameters[0]` after `def p`, a parameter that the function
        rebinds to a lambda on one path) is not known to hold a function where it is stored."""
        key = (scope, name)
        known = self._only_cache.get(key)
        if known is not None:
            return known
        known = name not in scope.params  # a parameter holds what the caller gave, until rebound
        if known and scope.kind == "function":
            for statement in _statements(scope.node.body):
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    if any((alias.asname or alias.name.split(".")[0]) == name
                           for alias in statement.names):
                        known = False
                elif isinstance(statement, _TRY_STATEMENTS):
                    if any(handler.name == name for handler in statement.handlers):
                        known = False
                if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                    value = statement.value
                    if (value is None or isinstance(value, ast.Lambda)
                            or (isinstance(value, ast.Constant) and value.value is None)
                            or _reads(value, name)):
                        continue
                for node in _expressions(statement):
                    if (isinstance(node, ast.Name) and node.id == name
                            and isinstance(node.ctx, ast.Store)):
                        known = False
                    elif isinstance(node, ast.NamedExpr) and node.target.id == name:
                        known = False
                if not known:
                    break
        self._only_cache[key] = known
        return known

    def reaches(self, closure, name, owner, seen):
        """The cells through which `closure` reads `owner`'s `name`, directly or through other
        nested functions it reads by name (`def cb(): helper()`, helper reading `self`): the
        names of those functions, then `name`; None when it does not."""
        cells = self.cells(closure)
        found = cells.get(name)
        if found is not None and found[0] is owner:
            return [name]
        for other, (scope, _) in sorted(cells.items()):
            for helper in self.named(scope).get(other, ()):
                if helper in seen:
                    continue
                seen.add(helper)
                path = self.reaches(helper, name, owner, seen)
                if path is not None:
                    return [other, *path]
        return None

    def held(self, node, scope):
        """The nested functions and lambdas that the value of `node`, evaluated in `scope`, keeps:
        itself, in a container display, a comprehension's elements, a partial application or an
        object a constructor makes. Pairs of (closure scope, expression)."""
        if isinstance(node, ast.Lambda):
            return [(self.builder.scopes[node], node)]
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            owner = _resolve(scope, node.id)
            if owner is None or owner.kind == "class":
                return []
            closures = self.named(owner).get(node.id, ())
            if not closures or not self.only_functions(owner, node.id):
                return []
            return [(closure, node) for closure in closures]
        parts = []
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            parts = node.elts
        elif isinstance(node, ast.Dict):
            parts = [n for n in [*node.keys, *node.values] if n is not None]
        elif isinstance(node, (ast.Starred, ast.NamedExpr)):
            parts = [node.value]
        elif isinstance(node, ast.IfExp):
            parts = [node.body, node.orelse]
        elif isinstance(node, ast.BoolOp):
            parts = node.values
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp)):
            inner = self.builder.scopes[node]
            elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            return [pair for element in elements for pair in self.held(element, inner)]
        elif isinstance(node, ast.Call) and _keeps_arguments(node):
            parts = [*node.args, *[keyword.value for keyword in node.keywords]]
        return [pair for part in parts for pair in self.held(part, scope)]

    # The function's code

    def sites(self):
        """Every store in the function's own code of a value into an object reached from a name."""
        out = []
        for statement in _statements(self.scope.node.body):
            if isinstance(statement, ast.Assign):
                if (len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
                        and isinstance(statement.value, ast.Lambda)):
                    self.lambda_statements[id(statement.value)] = statement
                for target in statement.targets:
                    out.extend(self._target_sites(statement, target, statement.value))
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                out.extend(self._target_sites(statement, statement.target, statement.value))
            elif isinstance(statement, ast.AugAssign):
                target = statement.target
                if isinstance(target, ast.Name):  # `handlers += [...]` extends the list in place
                    out.append(_Site(statement, target, target.id, target.id,
                                     f"into `{target.id}` (`+=`)", (statement.value,)))
                else:
                    out.extend(self._target_sites(statement, target, statement.value))
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in statement.decorator_list:
                    method = decorator.func if isinstance(decorator, ast.Call) else decorator
                    root = _root(method.value) if isinstance(method, ast.Attribute) else None
                    if root is not None and _registers(method.attr):
                        out.append(_Site(statement, decorator, root, unparse(method.value),
                                         f"by decorator `@{unparse(decorator)}`", None))
            for node in _expressions(statement):
                if not isinstance(node, ast.Call):
                    continue
                arguments = (*node.args, *[keyword.value for keyword in node.keywords])
                if isinstance(node.func, ast.Attribute) and _registers(node.func.attr):
                    root = _root(node.func.value)
                    if root is not None:
                        shown = unparse(node.func.value)
                        out.append(_Site(statement, node, root, shown,
                                         f"into `{shown}` (`.{node.func.attr}()`)", arguments))
                elif (isinstance(node.func, ast.Name) and node.func.id == "setattr"
                      and len(node.args) == 3 and not node.keywords
                      and _resolve(self.scope, "setattr") is None):
                    root = _root(node.args[0])
                    if root is not None:
                        attribute = node.args[1]
                        named_attribute = (isinstance(attribute, ast.Constant)
                                           and isinstance(attribute.value, str))
                        shown = (f"{unparse(node.args[0])}."
                                 f"{attribute.value if named_attribute else '<name>'}")
                        out.append(_Site(statement, node, root, shown,
                                         f"on attribute `{shown}` (setattr)", (node.args[2],)))
        return out

    def _target_sites(self, statement, target, value):
        if isinstance(target, (ast.Tuple, ast.List)):
            if (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                    and not any(isinstance(e, ast.Starred) for e in [*target.elts, *value.elts])):
                pairs = zip(target.elts, value.elts)
            else:
                pairs = [(element, value) for element in target.elts]
            return [site for element, part in pairs
                    for site in self._target_sites(statement, element, part)]
        if isinstance(target, ast.Starred):
            return self._target_sites(statement, target.value, value)
        if not isinstance(target, (ast.Attribute, ast.Subscript)):
            return []
        root = _root(target.value)
        if root is None:
            return []
        shown = unparse(target)
        where = f"on attribute `{shown}`" if isinstance(target, ast.Attribute) else f"in `{shown}`"
        return [_Site(statement, target, root, shown, where, (value,))]

    # The findings

    def may_hold_closures(self):
        """Whether the function's code can store a closure or define a recursive one: it has
        nested functions or lambdas (in comprehensions too), or is nested in a function whose
        own may be stored here. Most methods have none: their code is not walked again."""
        pending = list(self.scope.children)
        while pending:
            child = pending.pop()
            if child.kind in ("function", "lambda"):
                return True
            if child.kind == "comprehension":
                pending.extend(child.children)
        outer = self.scope.parent
        return outer is not None and outer.kind not in ("module", "class")

    def run(self):
        if not self.may_hold_closures():
            return
        sites = self.sites()  # first: it notes the `name = lambda` statements recursive() reads
        self.recursive()
        self.stored(sites)
        if not self.candidates:
            return
        flow = _ClosureFlow(self.linter.imports, self.scope, self.linter._helper_clears(self.scope),
                            self.marks)
        exits = flow.live_exits()
        for requirements, finding in self.candidates:
            if any(requirements.holds(state) for state in exits):
                self.linter._add(finding)

    def mark(self, statement, name, finding_key):
        binding = Binding(CLOSURE_CYCLE, statement.lineno, statement.col_offset + 1, finding_key)
        self.marks.setdefault(id(statement), []).append((name, binding))
        return (name, binding)

    def defining_statement(self, closure):
        if closure.kind == "function":
            return closure.node
        return self.lambda_statements.get(id(closure.node))

    def recursive(self):
        """Nested functions that reach themselves through this function's cells: the strongly
        connected parts of the graph of which one reads which."""
        named = self.named(self.scope)
        if not named:
            return
        edges = {}  # name -> {name read: first read}
        for name, closures in named.items():
            for closure in closures:
                for other, (owner, use) in self.cells(closure).items():
                    if owner is self.scope and other in named:
                        edges.setdefault(name, {}).setdefault(other, use)
        for component in _cycles(edges):
            first = min(component, key=lambda n: min(c.node.lineno for c in named[n]))
            targets = edges[first]
            other = first if first in targets else min(
                (n for n in component if n in targets), key=lambda n: (targets[n].lineno, n))
            use = targets[other]
            members = sorted(component, key=lambda n: (min(c.node.lineno for c in named[n]), n))
            captured = sorted({name for n in members for closure in named[n]
                               for name in self.cells(closure) if name not in component})
            self.candidates.append(self._recursive_finding(members, first, other, use, captured,
                                                           named, edges))

    def _recursive_finding(self, members, first, other, use, captured, named, edges):
        scope = self.scope
        key = f"{use.lineno}:{use.col_offset}"
        requirements = []
        for name in members:
            for closure in named[name]:
                statement = self.defining_statement(closure)
                if statement is not None:
                    requirements.append(self.mark(statement, name, key))
        by_name = {}
        for name, binding in requirements:
            by_name.setdefault(name, []).append(binding)
        kept = ""
        if captured:
            shown = ", ".join(f"`{name}`" for name in captured[:4])
            more = f" and {len(captured) - 4} more" if len(captured) > 4 else ""
            who = "it captures" if len(members) == 1 else "they capture"
            kept = f" and the variables {who} ({shown}{more})"
        if len(members) == 1:
            closure = named[first][0]
            what = (f"lambda `{first}`" if closure.kind == "lambda"
                    else f"nested function `{closure.qualname}`")
            message = (f"{what} refers to itself through the closure cell of `{first}` in "
                       f"`{scope.qualname}`: the function holds the cell and the cell holds the "
                       f"function, a reference cycle that each call of `{scope.qualname}` leaves "
                       f"behind, keeping the function{kept} alive until the cyclic GC runs")
            fix = (f"Pass `{first}` to itself as a parameter (`def {first}(..., {first})`, called "
                   f"as `{first}(..., {first})`), use a loop with an explicit stack, or move it to "
                   f"module level; or set `{first} = None` (or `del {first}`) in a `finally:` once "
                   f"the calls are done.")
        else:
            names = ", ".join(f"`{name}`" for name in members)
            message = (f"nested functions {names} of `{scope.qualname}` refer to each other through "
                       f"their closure cells (`{first}` reads `{other}` here): each function holds "
                       f"the cell of the next, a reference cycle that each call of "
                       f"`{scope.qualname}` leaves behind, keeping the functions{kept} alive until "
                       f"the cyclic GC runs")
            fix = (f"Pass the functions as parameters instead of reading them from the enclosing "
                   f"scope, or make them module-level functions or methods; or set {names} to None "
                   f"(or `del` them) in a `finally:` once the calls are done.")
        finding = Finding(CLOSURE_CYCLE, self.linter.path, use.lineno, use.col_offset + 1,
                          scope.qualname, first, message, fix)
        reads = {name: set(edges[name]) & set(members) for name in members}
        return _LiveCycle(by_name, reads), finding

    def stored(self, sites):
        for site in sites:
            owner = _resolve(self.scope, site.root)
            if not _holds_cells(owner):
                continue
            values = site.values
            if values is None:  # a decorator: the decorated function itself
                closures = [(self.builder.scopes[site.statement], site.statement, None)]
            else:
                closures = [(closure, expression, value) for value in values
                            for closure, expression in self.held(value, self.scope)]
            for closure, expression, value in closures:
                self._stored_closure(site, owner, closure, expression, value)

    def _stored_closure(self, site, owner, closure, expression, value):
        root = site.root
        if isinstance(expression, ast.Lambda):
            what = f"`{unparse(expression)}`"
        elif closure.kind == "lambda":
            what = f"lambda `{unparse(expression)}`"
        else:
            what = f"nested function `{closure.qualname}`"
        if value is not None and value is not expression:
            what += f" (in `{unparse(value)}`)"
        args = closure.node.args
        defaults = [d for d in [*args.defaults, *args.kw_defaults] if d is not None]
        by_default = any(_resolve(closure.parent, root) is owner and _default_names(d, root)
                         for d in defaults)
        path = None if by_default else self.reaches(closure, root, owner, {closure})
        if not by_default and path is None:
            return
        if by_default:
            how = f"holds `{root}` as a default argument value"
            through = "its default values hold"
        elif len(path) == 1:
            how = f"captures `{root}`"
            through = "its closure cell holds"
        else:
            helpers = ", ".join(f"`{name}`" for name in path[:-1])
            how = f"captures `{root}` through nested function {helpers}"
            through = "its closure cells reach"
        message = (f"{what} {how} and is stored {site.where} in `{self.scope.qualname}`: `{root}` "
                   f"reaches the function and {through} `{root}`, a reference cycle that keeps both, "
                   f"and everything `{root}` holds, alive until the cyclic GC runs")
        target = site.shown
        if by_default:
            fix = (f"Do not give the callback `{root}` as a default value: have it take "
                   f"`ref = weakref.ref({root})` (`{root}_ref=weakref.ref({root})`) and call `ref()` "
                   f"inside, or pass `{root}` as an argument when the callback is called.")
        else:
            fix = (f"Capture a weak reference instead of `{root}`: `ref = weakref.ref({root})` before "
                   f"defining the callback and `obj = ref()` inside it (`weakref.WeakMethod` for a "
                   f"bound method); or pass `{root}` as an argument when the callback is called; or "
                   f"clear the store (`{target} = None`, remove it from the container) when it is "
                   f"no longer needed.")
        node = site.node
        finding = Finding(CLOSURE_CYCLE, self.linter.path, node.lineno, node.col_offset + 1,
                          self.scope.qualname, target, message, fix)
        if by_default:
            self.linter._add(finding)  # the default holds the object whatever the name holds later
            return
        key = f"{node.lineno}:{node.col_offset}"
        self.candidates.append((_AnyOf({root: [self.mark(site.statement, root, key)[1]]}), finding))


def _default_names(node, name):
    """Whether a default value is the object `name` holds (alone or in a display), not something
    computed from it (`name.attr`, `weakref.ref(name)`)."""
    if isinstance(node, ast.Name):
        return node.id == name
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_default_names(element, name) for element in node.elts)
    if isinstance(node, ast.Dict):
        return any(_default_names(value, name) for value in node.values)
    return False


class _AnyOf(dict):
    """A cycle's requirements at an exit: each name (key) holds one of its bindings (value)."""

    def holds(self, state):
        return all(any(binding in state.get(name, ()) for binding in bindings)
                   for name, bindings in self.items())


class _LiveCycle:
    """Recursive closures' requirements at an exit: the names whose cells still hold their
    function (one of its definitions' bindings) still make a cycle. Unbinding one name of `a` <->
    `b` breaks it; unbinding `encode_list` of `encode_list` <-> `encode` <-> `encode_dict` leaves
    the other cycle."""

    def __init__(self, bindings, edges):
        self.bindings = bindings  # name -> the bindings its definitions make
        self.edges = edges  # name -> the names of the component it reads

    def holds(self, state):
        live = {name for name, bindings in self.bindings.items()
                if any(binding in state.get(name, ()) for binding in bindings)}
        live |= set(self.edges) - set(self.bindings)  # a definition the flow does not see: bound
        return bool(_cycles({name: self.edges[name] & live for name in live}))


def _cycles(edges):
    """The strongly connected components of a graph (node -> nodes) that hold a cycle: more than
    one node, or one that reaches itself. Tarjan's algorithm, iterative."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    out.append(frozenset(component))
    return out


# Large modules, in pieces ---------------------------------------------------------------------------

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
    return FileLinter(path, tree).run()


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

