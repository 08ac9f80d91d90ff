"""typeguard: check_uniontype (PEP 604 `X | Y`) keeps every failed member check in a dict local.

https://github.com/agronholm/typeguard/pull/493 ("Fixed reference cycles").
The same `errors[name] = exc` pattern as check_union, missed by the first fix (4.2.0) in
`check_uniontype`; fixed in 4.4.1.
"""
# package: typeguard
# leaking: 4.4.0
# fixed: 4.4.1
# python: 3.11+
# culprit: typeguard._checkers.check_uniontype

from typeguard import check_type


def validate(value):
    payload = bytearray(4 << 20)
    check_type(value, str | bytes)  # str fails first, bytes matches
    return len(payload)


validate(b"x")
