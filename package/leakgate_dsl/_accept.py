"""Known findings a project accepts, each by its culprit and with the reason written down: in the
`[tool.leakgate.accept]` table of its pyproject.toml and in the pytest marker's `accept=`.

    [tool.leakgate.accept]
    "_symbolic_trace.py:wrap" = "torch 2.11's own fx.wrap cycle, in every program that imports torch"

A key names a culprit as leakgate's findings do: the culprit frame's function (its qualified name,
`ModelDSL.kernel`), optionally after the file it is in (`frame_cycle_461.py:ModelDSL.kernel`; the
end of the path, or a glob: `*/torch/fx/*.py:wrap`); `*` and `?` match as in fnmatch. The value is
the reason, which may not be empty. A finding whose culprit matches is accepted: it does not count
against the limits, and it is reported as accepted with its reason, never dropped silently.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional

from leakgate_dsl._results import Finding

TABLE = "[tool.leakgate.accept]"


@dataclass(frozen=True)
class Acceptance:
    """One accepted culprit: the key as written, its reason, and where it was written
    ("pyproject.toml" with its path, or the marker of a test)."""

    culprit: str
    reason: str
    source: str

    def matches(self, finding: Finding) -> bool:
        culprit = finding.culprit
        if culprit is None:
            return False
        where, _, function = self.culprit.rpartition(":")
        if not fnmatch.fnmatchcase(culprit.function, function):
            return False
        if not where:
            return True
        path = culprit.file.replace(os.sep, "/")
        return fnmatch.fnmatchcase(path, where) or fnmatch.fnmatchcase(path, "*/" + where)


def culprit_key(finding: Finding) -> Optional[str]:
    """The key that accepts `finding`: its culprit's file name and function, or None when it
    names no culprit frame."""
    culprit = finding.culprit
    if culprit is None:
        return None
    return f"{os.path.basename(culprit.file)}:{culprit.function}"


def parse(entries: Any, source: str) -> tuple[Acceptance, ...]:
    """The acceptances of a table or a marker's `accept=` (culprit -> reason). Raises ValueError
    naming `source` and what is wrong."""
    if not isinstance(entries, dict):
        raise ValueError(f"{source}: expected a table of culprit = \"reason\", got {type(entries).__name__}")
    accepted = []
    for culprit, reason in entries.items():
        if not isinstance(culprit, str) or not culprit.rpartition(":")[2]:
            raise ValueError(f"{source}: {culprit!r}: a culprit is a function's name, or FILE:FUNCTION")
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"{source}: {culprit!r}: expected the reason it is accepted, a non-empty "
                             f"string, got {reason!r}")
        accepted.append(Acceptance(culprit, reason.strip(), source))
    return tuple(accepted)


def find_project_file(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml at or above `start` (a directory), as `leakgate lint` finds its
    own."""
    for directory in (start.resolve(), *start.resolve().parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_project_file(file: Path) -> tuple[Acceptance, ...]:
    """The `[tool.leakgate.accept]` table of `file` (none when it has no such table). Raises
    ValueError with the file for TOML that does not parse and for a key or value that is wrong."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: pytest depends on tomli there
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(file, "rb") as opened:
            document = tomllib.load(opened)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{file}: not TOML: {error}") from None
    table = document.get("tool", {}).get("leakgate", {}).get("accept")
    if table is None:
        return ()
    return parse(table, f"{file}: {TABLE}")


def split(findings: Iterable[Finding], acceptances: Iterable[Acceptance]):
    """The findings no acceptance matches, and those one does, each with the first that does."""
    acceptances = tuple(acceptances)
    kept, accepted = [], []
    for finding in findings:
        match = next((a for a in acceptances if a.matches(finding)), None)
        if match is None:
            kept.append(finding)
        else:
            accepted.append((finding, match))
    return kept, accepted
