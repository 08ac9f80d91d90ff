"""The one task every probe in bench/compare/ gives its tool, so that the rows compare like with like.

A DSL author's regression test: with the cyclic collector disabled, a function holds a large
payload (64 MiB, in an object a weakref can watch) in a local and decorates a kernel with the
DSL's decorator; when the function returns, the payload must be freed by reference counting
alone, without gc.collect(). With fixtures/targets/frame_cycle_461.py it is not: ModelDSL.kernel
binds its own frame to the local ``cur_frame``, that frame is in a cycle with itself, and through
``f_back`` it pins the decorating function's frame and so the payload. With
fixtures/targets/temporary_back.py (the clean release) it is freed.

Standard library only: each probe imports this module in the tool's own interpreter.
"""

import importlib.util
import json
import os
import weakref

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LEAKING_MODEL = os.path.join(ROOT, "fixtures", "targets", "frame_cycle_461.py")
CLEAN_MODEL = os.path.join(ROOT, "fixtures", "targets", "temporary_back.py")
MODELS = {"leaking": LEAKING_MODEL, "clean": CLEAN_MODEL}

MIB = 1 << 20
PAYLOAD_BYTES = 64 * MIB

# The probes print the tool's own report between these lines, then one RESULT line of JSON;
# compare_tools.py reads only those, so a tool's chatter elsewhere cannot confuse it.
REPORT_BEGIN = "----- tool report begin -----"
REPORT_END = "----- tool report end -----"
RESULT_PREFIX = "RESULT "


class Payload:
    """The local the test watches: 64 MiB of bytes. A bytearray cannot be weakly referenced, so it
    is wrapped; the wrapper (with __slots__, so no instance dict) is what the weakref watches."""

    __slots__ = ("buffer", "__weakref__")

    def __init__(self, size=PAYLOAD_BYTES):
        self.buffer = bytearray(size)


def load_model(name_or_path):
    """Imports a regression model from its file ("leaking", "clean" or a path) under a fixed module
    name, so that no tool's report differs between the two models by the module's name."""
    path = MODELS.get(name_or_path, name_or_path)
    spec = importlib.util.spec_from_file_location("dsl_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def decorate_holding_payload(model, watch):
    """The decorating function of the task: its frame holds the payload while it decorates, and
    it returns nothing that refers to that frame. Appends a weakref to the payload to ``watch``.

    (compare_tools.py looks for the decorator's name in the tools' reports; no function or class
    here carries it, so a report that names it took the name from the model.)"""
    payload = Payload()
    watch.append(weakref.ref(payload))

    @model.kernel
    def add_one(x):
        return x + 1

    return None


def emit_result(report, **result):
    """Prints what the user of the tool would read (``report``), then the measured result as one
    JSON line: the protocol compare_tools.py parses."""

    print(REPORT_BEGIN)
    print(report.rstrip("\n"))
    print(REPORT_END)
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def payload_alive(watch):
    """Whether the watched payload still exists: the check the DSL author's test asserts on."""
    return watch[-1]() is not None
