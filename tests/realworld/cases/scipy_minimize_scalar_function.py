"""scipy: every minimize() leaves its ScalarFunction in a self-cycle that holds its arrays.

https://github.com/scipy/scipy/issues/20768 ("BUG: optimize.minimize: garbage collection in
`lbfgs`"), https://github.com/scipy/scipy/pull/20770 ("MAINT: optimize: remove circular
reference in `ScalarFunction`"). In 1.13.1 `ScalarFunction.__init__` defines closures over
`self` (`update_fun`, `update_grad`, `update_x`, ...) and stores them on `self`
(`self._update_fun_impl = update_fun`): the object refers to itself through their closure cells.
No frame is in that cycle; it keeps the object's arrays (`x`, `g`, `_lowest_x`: the size of the
problem each) until a collection, so under gc.disable() every call of minimize keeps them.
1.14.0 keeps `self` out of the closures. The reporters ran minimize in a loop and watched memory.
"""
# package: scipy
# leaking: 1.13.1
# fixed: 1.14.0
# python: 3.11
# kind: cyclic-garbage
# culprit: scipy.optimize._differentiable_functions.ScalarFunction.__init__
# extra: numpy==1.26.4

import numpy as np
from scipy.optimize import minimize


def fit(seed, n=5000):
    x0 = np.random.default_rng(seed).uniform(-1.0, 1.0, n)
    res = minimize(lambda x: float(x @ x), x0, jac=lambda x: 2 * x, method="L-BFGS-B")
    return res.fun


for seed in range(120):
    fit(seed)
