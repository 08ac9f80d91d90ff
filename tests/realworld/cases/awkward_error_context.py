"""awkward: every high-level operation leaves its error context in a cycle with its arguments.

https://github.com/scikit-hep/awkward/issues/2440, https://github.com/scikit-hep/awkward/pull/2442
("fix: avoid reference cycles with the error-handling machinery"). In 2.1.4 each `ak.*` call
(and each slice, each NumPy ufunc on an ak.Array) enters an `OperationErrorContext` whose
`_kwargs` hold `PartialFunction(self.format_argument, ...)`: context -> dict -> PartialFunction
-> bound method -> context, a cycle with no frame that also holds the arguments (the arrays).
2.2.0 clears `_kwargs` in `ErrorContext.__exit__`. The driver runs a few everyday operations in a
loop: each pass makes 13 such cycles (one per operation), so 12 passes make 156.
"""
# package: awkward
# leaking: 2.1.4
# fixed: 2.2.0
# python: 3.11
# kind: cyclic-garbage
# culprit: awkward._errors.ErrorContext.__exit__
# extra: numpy==1.26.4

import numpy as np
import awkward as ak


def summarize(seed):
    events = ak.Array([[1.0, 2.0, float(seed)], [], [4.0, 5.0]] * 1000)
    totals = ak.sum(events, axis=1)
    high = events[events > 2.0]
    roots = np.sqrt(events)
    counts = ak.num(events)
    flat = ak.flatten(events)
    return len(totals) + len(high) + len(roots) + len(counts) + len(flat)


for seed in range(12):
    summarize(seed)
