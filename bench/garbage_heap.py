"""A garbage heap of a chosen size for the P1 scan benchmark (docs/notes/performance.md).

The shape is a program that decorates kernels while it works, with gc.disable():

* every `unit` calls `prepare`, whose frame holds a batch of records (instances and dicts in
  cycles with their list and an index dict); `prepare` calls `define`, which decorates a
  kernel with `kernel`, the decorator of nvidia-cutlass-dsl 4.6.1 that binds its own frame to
  a local (`cur_frame`). That frame sits in a cycle and pins `define` and `prepare` (f_back)
  with every local they hold: the frame cycle leakgate explains.
* every unit also leaves ordinary cycles behind that no frame reaches: a tree whose nodes point
  at their parent, with per-node attribute dicts, and a cache dict that contains itself.

About a fifth of the objects hang off frames; the rest is ordinary cyclic garbage, as in a real
process where frame cycles are rare among all the cycles a collection finds.

`build(n)` leaves about n objects of cyclic garbage (measured: `calibrate`), nothing else.
"""

import gc
import inspect

RECORDS_PER_UNIT = 8
TREE_NODES_PER_UNIT = 40


class Record:
    def __init__(self, key, batch):
        self.key = key
        self.batch = batch  # the list that holds it: a cycle
        self.meta = {"key": key, "shape": [key, key + 1], "owner": self}


class TreeNode:
    def __init__(self, parent):
        self.parent = parent
        self.children = []
        self.attrs = {"depth": 0 if parent is None else parent.attrs["depth"] + 1}
        if parent is not None:
            parent.children.append(self)


def kernel(fn):
    # The 4.6.1 shape: the decorator keeps its own frame in a local.
    cur_frame = inspect.currentframe()
    location = (fn.__qualname__, cur_frame.f_lineno)
    return fn


def define(records):
    @kernel
    def scale(factor):
        return [record.key * factor for record in records]

    return scale.__name__


def prepare(unit, sentinels):
    batch = []
    for key in range(RECORDS_PER_UNIT):
        batch.append(Record(unit * RECORDS_PER_UNIT + key, batch))
    index = {record.key: record for record in batch}
    index["all"] = index
    payload = Payload()
    if sentinels is not None:
        sentinels.append(payload)
    define(batch)


class Payload:
    """What a sentinel is: a weakref-able object a frame holds (here without a big buffer)."""


def ordinary_cycles(unit):
    root = TreeNode(None)
    nodes = [root]
    for i in range(1, TREE_NODES_PER_UNIT):
        nodes.append(TreeNode(nodes[(i - 1) // 3]))
    cache = {"root": root, "unit": unit}
    cache["cache"] = cache
    root.attrs["cache"] = cache


def unit(index, sentinels=None):
    prepare(index, sentinels)
    ordinary_cycles(index)


def build_units(count, sentinels=None):
    for index in range(count):
        unit(index, sentinels)


_per_unit = None


def calibrate(units=200):
    """Objects of cyclic garbage one unit leaves, measured on this interpreter."""
    global _per_unit
    if _per_unit is None:
        enabled = gc.isenabled()
        gc.disable()
        gc.collect()
        build_units(units)
        _per_unit = gc.collect() / units
        if enabled:
            gc.enable()
    return _per_unit


def build(n, sentinels=None):
    """Leaves about n objects of cyclic garbage; gc must be disabled by the caller."""
    build_units(max(1, round(n / calibrate())), sentinels)
