"""Chameleon: lookup_attr keeps the sys.exc_info() exception in a local of its own frame.

https://github.com/malthe/chameleon/pull/344 ("Avoid various traceback reference cycles",
shipped in 3.9.1). In 3.9.0 `lookup_attr` does `exc = sys.exc_info()[1]` when `getattr` fails
and the item lookup succeeds: the AttributeError's traceback holds lookup_attr's frame, whose
local `exc` holds it. Every `a.b` on a dict in a template makes one; through f_back the render
frames and the caller's locals are kept. (3.9.0 builds its AST with `ast.Str`: Python 3.11 only.)
"""
# package: Chameleon
# leaking: 3.9.0
# fixed: 3.9.1
# python: 3.11
# culprit: chameleon.utils.lookup_attr
# extra: setuptools<70

from chameleon import PageTemplate

template = PageTemplate("<p>${d.key}</p>")


def render_page():
    payload = bytearray(4 << 20)
    html = template(d={"key": 1})  # attribute lookup on a dict falls back to item lookup
    return html, len(payload)


render_page()
