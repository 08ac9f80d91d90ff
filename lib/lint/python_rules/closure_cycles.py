"""The rule `closure-cycle`: a nested function in a reference cycle through its closure (the
comment below says which shapes), found over the scopes FileLinter built."""

from __future__ import annotations

import ast
from typing import NamedTuple

from .kinds import Binding, Finding, STORING_METHODS
from .syntax import child_nodes, unparse, walk
from .flow import FlowAnalyzer, _Silent
from .fixes import FixTarget


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
        closures = tuple(closure for name in members for closure in named[name])
        self.linter.fixable(finding, FixTarget(scope, tuple(members),
                                               min(c.node.lineno for c in closures), closures))
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
