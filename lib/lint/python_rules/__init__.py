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

The modules, each building on those above it:

    kinds.py           what a value holds as far as frames go, the findings' texts and fixes, the
                       flow's states, the file's names for inspect and sys
    syntax.py          a node's children, a walk of a tree, an expression as a short label
    scopes.py          the scope tree of a file (ScopeBuilder)
    flow.py            the flow analysis of one scope (FlowAnalyzer)
    closure_cycles.py  the rule `closure-cycle`
    file_linter.py     one file's lint: `own-frame-local`, `frame-stored`, then `closure-cycle`
    fixes.py           the edits that fix a finding, where one is always correct (`lint --fix`)
    pieces.py          a large file in pieces of top-level statements (PiecewiseLint)
    driver.py          lint_paths, lint_source and the command line (main)
    __main__.py        `python3 lib/lint/python_rules PATH...`
"""

from .driver import lint_paths, lint_source, main

__all__ = ["lint_paths", "lint_source", "main"]
