"""The scope tree of a file: each module, class, function, lambda and comprehension with the names
it binds, declares global or nonlocal and reads (ScopeBuilder, the one walk of the whole tree)."""

from __future__ import annotations

import ast

from .kinds import Imports
from .syntax import child_nodes


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
