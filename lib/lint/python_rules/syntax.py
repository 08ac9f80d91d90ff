"""Syntax trees: an expression as a short label (unparse), and the children of a node and a walk of
a tree, each node class read through a function made for its fields."""

from __future__ import annotations

import ast
from collections import deque


def shorten(text, limit=70):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def unparse(node):
    try:
        return shorten(ast.unparse(node))
    except Exception:  # noqa: BLE001 - a label only
        return "<expression>"


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
