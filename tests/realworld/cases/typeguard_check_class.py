"""typeguard: check_class's `Type[Union[...]]` branch keeps every failed member check in a dict.

https://github.com/agronholm/typeguard/pull/493 ("Fixed reference cycles").
`check_class` with `expected_class` a Union (origin `typing.Union`) collects the failures of the
members in `errors[...] = exc`; fixed in 4.4.1.
"""
# package: typeguard
# leaking: 4.4.0
# fixed: 4.4.1
# python: 3.11+
# culprit: typeguard._checkers.check_class

from typing import Type, Union

from typeguard import check_type


def validate(value):
    payload = bytearray(4 << 20)
    check_type(value, Type[Union[str, bytes]])  # str fails first, bytes matches
    return len(payload)


validate(bytes)
