"""typeguard: check_union keeps every failed member check in a dict local.

https://github.com/agronholm/typeguard/pull/408 ("Avoid creating ref cycles").
In 4.1.5 `check_union` does `errors[name] = exc` for each union member that fails; each
TypeCheckError's traceback holds check_union's frame, whose `errors` dict holds the error, even
when a later member matches. Through f_back the callers' frames (and `payload`) are kept.
"""
# package: typeguard
# leaking: 4.1.5
# fixed: 4.2.0
# python: 3.11+
# culprit: typeguard._checkers.check_union
# extra: typing_extensions

from typing import Union

from typeguard import check_type


def validate(value):
    payload = bytearray(4 << 20)
    check_type(value, Union[str, bytes])  # str fails first, bytes matches
    return len(payload)


validate(b"x")
