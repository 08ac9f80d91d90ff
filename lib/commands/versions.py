"""PEP 440 for `leakgate bisect`: which releases a selection takes, and their order.

Run by the parent with the build's Python (lib/commands/versions.cpp). Reads one JSON object on
descriptor 4 (the parent's input file) and writes one on stdout:

    in:  {"versions": ["4.8.0", "4.8.0.dev0", ...], "specifier": ">=4.6,<4.8" or null,
          "pre": false}
    out: {"selected": [...oldest first...], "invalid": [...], "implementation": "packaging 21.3"}
         or {"error": "..."} for a specifier that is not one

Without a specifier every valid version is kept (a list the user wrote), only ordered. The
ordering and the matching are the `packaging` library's (the one pip vendors when it is not
installed on its own): PEP 440, with pre-, post-, dev-releases and local versions.
"""

import json
import os
import sys

try:
    from packaging import __version__ as implementation_version
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version
except ImportError:  # pip vendors it; every venv and every CPython with ensurepip has pip
    from pip._vendor.packaging import __version__ as implementation_version
    from pip._vendor.packaging.specifiers import InvalidSpecifier, SpecifierSet
    from pip._vendor.packaging.version import InvalidVersion, Version


def select(request):
    parsed, invalid = [], []
    for text in request["versions"]:
        try:
            parsed.append((Version(text), text))
        except InvalidVersion:
            invalid.append(text)
    specifier = request.get("specifier")
    if specifier is not None:
        try:
            wanted = SpecifierSet(specifier)
            # packaging before 22 falls back to pre-PEP 440 "legacy" specifiers (`<<4.8`): none of ours.
            legacy = [str(part) for part in wanted if type(part).__name__ == "LegacySpecifier"]
        except InvalidSpecifier:
            legacy = [specifier]
        if legacy:
            return {"error": f"`{legacy[0]}` is not a PEP 440 version specifier (e.g. >=4.6,<4.8)"}
        # prereleases=False drops them even where the specifier names one; True keeps them.
        parsed = [(version, text) for version, text in parsed
                  if wanted.contains(version, prereleases=bool(request.get("pre")))]
    parsed.sort(key=lambda pair: pair[0])
    return {"selected": [text for _, text in parsed], "invalid": invalid,
            "implementation": f"packaging {implementation_version}"}


if __name__ == "__main__":
    with os.fdopen(4) as request:
        json.dump(select(json.load(request)), sys.stdout)
