"""One file's lint (FileLinter): its scopes, the flow of each, and what that leaves bound at the
exits or stored where it outlives the call: the rules `own-frame-local` and `frame-stored`; then
the rule `closure-cycle` (closure_cycles.py) over the same scopes."""

from __future__ import annotations

import ast

from .kinds import (AS_ARGUMENT, FIX_CLOSURE, FIX_STORED, FRAME_STORED, Finding, OWN_FRAME_LOCAL,
                    OWN_KINDS, describe, own_fix, sorted_findings)
from .syntax import unparse, walk
from .scopes import ScopeBuilder
from .flow import FlowAnalyzer, _NonlocalClearing
from .closure_cycles import ClosureCycles
from .fixes import FixTarget


class FileLinter:
    # Finding key -> FixTarget: what a finding's fix would clear (fixes.py). None where no fix is
    # made (a file linted in pieces).
    fix_targets = None

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
        self.fix_targets = {}

    def _add(self, finding):
        key = (finding.rule, finding.line, finding.column, finding.name)
        self.findings.setdefault(key, finding)

    def fixable(self, finding, target):
        if self.fix_targets is not None:
            self.fix_targets.setdefault((finding.rule, finding.line, finding.column, finding.name),
                                        target)

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
        finding = Finding(OWN_FRAME_LOCAL, self.path, binding.line, binding.column, scope.qualname,
                          name, message, own_fix(binding.kind))
        self._add(finding)
        if scope.kind == "function":
            self.fixable(finding, FixTarget(scope, (name,), binding.line))

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
