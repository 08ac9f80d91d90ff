"""xgboost: every QuantileDMatrix keeps its data iterator, and the input arrays, in a cycle.

https://github.com/dmlc/xgboost/pull/11177 ("Remove circular reference in DataIter"). In 2.1.4
`DataIter.get_callbacks` stores the ctypes callbacks it makes from its own bound methods on
`self` (`self._reset_callback = CFUNCTYPE(...)(self._reset_wrapper)`): iterator -> callback ->
bound method -> iterator, a cycle with no frame that holds the iterator's `data` and `label`
arrays. Every QuantileDMatrix (and every DMatrix built from an iterator) makes one, so under
gc.disable() each construction keeps its input. 3.0.0 returns the callbacks without storing
them. The PR's reporter built QuantileDMatrix objects in a loop; so does this driver
(xgboost-cpu is the same Python package without the CUDA library).
"""
# package: xgboost-cpu
# leaking: 2.1.4
# fixed: 3.0.0
# python: 3.11
# kind: cyclic-garbage
# culprit: xgboost.core.DataIter.get_callbacks
# extra: numpy==1.26.4 scipy==1.13.1

import numpy as np
import xgboost as xgb


def build(seed):
    data = np.random.default_rng(seed).random((1000, 8))
    label = data.sum(axis=1)
    matrix = xgb.QuantileDMatrix(data, label, nthread=1)
    return matrix.num_row()


for seed in range(120):
    build(seed)
