"""mashumaro: every class compiled keeps its CodeBuilder, and the class, in a method-level cache.

https://github.com/Fatal1ty/mashumaro/issues/364 ("CodeBuilder instances are retained by
method-level lru_cache"). In 3.22 `CodeBuilder.get_field_default` is an unbounded
`functools.lru_cache(None)` on a method: `self` is part of every key, so each CodeBuilder (and the
dataclass it compiled, its namespace and its fields) stays in a cache that the class
`CodeBuilder` holds, one entry per field lookup, for as long as the program runs. 3.23 keeps the
cached values on the instance. The driver makes serializable dataclasses at run time, as the
report does (a schema per request, a model per table), and round-trips one record through each.
"""
# package: mashumaro
# leaking: 3.22
# fixed: 3.23
# python: 3.11+
# kind: held-growth
# culprit: mashumaro.core.meta.code.builder.CodeBuilder.get_field_default

from dataclasses import make_dataclass

from mashumaro import DataClassDictMixin

FIELDS = [(f"field_{j}", int) for j in range(40)]


def round_trip(i):
    record_type = make_dataclass(f"Record{i}", FIELDS, bases=(DataClassDictMixin,))
    record = record_type.from_dict({name: j for j, (name, _) in enumerate(FIELDS)})
    return record.to_dict()


# 30 classes: below cyclic-garbage's limits in the fixed release too (a class is a cycle, which
# under gc.disable() waits for the collector in any release).
for i in range(30):
    round_trip(i)
