"""sentry-sdk: every serialize() leaves its eight nested helpers in a closure cycle.

https://github.com/getsentry/sentry-python/issues/6559 ("Memory leak: `serializer.serialize()`
creates reference cycles on every call"), https://github.com/getsentry/sentry-python/pull/6563
("fix(serializer): avoid creating reference cycles on every call"). In 2.62.0 `serialize`
defines nested functions (`_serialize_node`, `_serialize_node_impl`, ...) that refer to each
other through closure cells: function -> __closure__ -> cell -> function, a cycle with no frame
in it, made once per call (and the SDK calls serialize once per event and once per stack frame
of an event's locals). 2.63.0 moves the helpers onto a per-call `_Serializer` object. The
reporter serialized a sample event in a loop under gc.disable(); so does this driver.
"""
# package: sentry-sdk
# leaking: 2.62.0
# fixed: 2.63.0
# python: 3.11+
# kind: cyclic-garbage
# culprit: sentry_sdk.serializer.serialize

from sentry_sdk.serializer import serialize

SAMPLE_EVENT = {
    "message": "boom",
    "exception": {"values": [{"type": "ValueError", "value": "boom"}]},
    "extra": {"items": [{"price": i * 1.5, "name": "item_%d" % i} for i in range(40)]},
    "breadcrumbs": {"values": [{"message": "crumb %d" % i} for i in range(20)]},
}

for _ in range(150):
    serialize(SAMPLE_EVENT)
