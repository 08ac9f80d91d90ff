"""The flow analysis: the statements of one scope run over frame states, each statement mapping the
bindings that may be live before it to those after it (FlowAnalyzer; the package's docstring says
how branches, loops, `finally` and `except ... as` are followed)."""

from __future__ import annotations

import ast

from .kinds import (ATTRIBUTE_KIND, Binding, CHAINING_ATTRIBUTES, OWN_KINDS, STORING_METHODS,
                    _constant_int, _is_exception_class, merge, without)
from .syntax import child_nodes, unparse, walk


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
