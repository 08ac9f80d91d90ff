"""What a measurement found, as objects: built from the schema leakgate/1 JSON that the library
writes (the CLI's `--json` has the same fields), plus the text the CLI prints for it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class Frame:
    """One Python frame: qualified function name, file and line."""

    function: str
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.function} ({self.file}:{self.line})"


@dataclass(frozen=True)
class Step:
    """One labelled edge of a reference path: `kind` is local, cell, attribute, f_back, ...;
    `label` how a person reads it ("local `cur_frame`"); `to` the object it reaches."""

    kind: str
    label: str
    to: str


@dataclass(frozen=True)
class Finding:
    """A frame cycle or a retained frame, explained: the culprit frame first in `frames` (then
    the frames it pins through f_back), the locals that close the cycle, the labelled path, the
    objects and bytes it keeps alive, and the fix."""

    kind: str
    summary: str
    frames: tuple[Frame, ...]
    locals: tuple[str, ...]
    path: tuple[Step, ...]
    root: str
    objects: int
    bytes: int
    fix: str
    harness_frames: int = 0
    # The statement to change, where leakgate found it (the line that binds the closing local).
    fix_site: Optional[Frame] = None
    # The sentinels' payloads the finding pins that `bytes` cannot see, by kind: {"device": n}.
    payload_bytes: dict[str, int] = field(default_factory=dict)

    @property
    def culprit(self) -> Optional[Frame]:
        return self.frames[0] if self.frames else None


@dataclass(frozen=True)
class Check:
    """One check's verdict: status is "pass", "fail", "skip" or "error"; `amount` the figure it
    judged (bytes pinned), where it has one."""

    name: str
    status: str
    reason: str
    amount: Optional[int] = None


@dataclass(frozen=True)
class SentinelVerdict:
    """What happened to one sentinel: freed-by-refcount, freed-by-gc-only or never-freed."""

    label: str
    kind: str
    bytes: int
    verdict: str


@dataclass(frozen=True)
class Result:
    """One measurement (a region, or explain()). `valid` is False when the measurement could not
    be made (gc re-enabled, a collection whose garbage could not be read, the body raised): then `error`
    says why, and no check passed."""

    name: str
    checks: tuple[Check, ...]
    findings: tuple[Finding, ...]
    sentinels: tuple[SentinelVerdict, ...]
    error: Optional[str]
    details: dict = field(repr=False)
    seconds: float
    text: str = field(repr=False)
    json: dict = field(repr=False)
    # The whole schema leakgate/1 document the CLI's --json writes for this result (the plugin's
    # --leakgate-report saves it), as text.
    report: str = field(repr=False, default="")

    @property
    def valid(self) -> bool:
        return self.error is None and all(check.status != "error" for check in self.checks)

    def check(self, name: str) -> Optional[Check]:
        return next((check for check in self.checks if check.name == name), None)

    @property
    def frame_cycles(self) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if finding.kind == "frame-cycle")

    @property
    def retained_frames(self) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if finding.kind == "retained-frame")

    @property
    def allocations(self) -> Optional[int]:
        """Calls of CPython's allocators (RAW, MEM, OBJ) made by the body."""
        return self.details.get("allocations")

    @property
    def net_blocks(self) -> Optional[int]:
        """Allocations minus frees made by the body."""
        return self.details.get("net_blocks")

    @property
    def cyclic_garbage(self) -> Optional[int]:
        """Objects the body left in cyclic garbage (what one DEBUG_SAVEALL collection saved)."""
        return self.details.get("cyclic_garbage_objects")

    @property
    def pinned_bytes(self) -> int:
        """Bytes the frame cycles keep alive until the cyclic GC runs (each object once)."""
        return int(self.details.get("pinned_bytes", 0))

    def __str__(self) -> str:
        return self.text


def _frame(data: dict) -> Frame:
    return Frame(data["function"], data["file"], data["line"])


def _finding(data: dict) -> Finding:
    return Finding(
        kind=data["kind"],
        summary=data["summary"],
        frames=tuple(_frame(frame) for frame in data.get("frames", ())),
        locals=tuple(data.get("locals", ())),
        path=tuple(Step(step["kind"], step["label"], step["to"]) for step in data.get("path", ())),
        root=data.get("root", ""),
        objects=data.get("objects", 0),
        bytes=data.get("bytes", 0),
        fix=data.get("fix", ""),
        harness_frames=data.get("harness_frames", 0),
        fix_site=_frame(data["fix_site"]) if data.get("fix_site") else None,
        payload_bytes=dict(data.get("payload_bytes", {})),
    )


def result_from(encoded: dict[str, Any]) -> Result:
    """A Result from what the extension module returns: {"json": ..., "report": ..., "text": ...}."""
    data = json.loads(encoded["json"])
    error = data.get("error")
    return Result(
        name=data["subject"],
        checks=tuple(Check(c["name"], c["status"], c["reason"], c.get("amount")) for c in data["checks"]),
        findings=tuple(_finding(finding) for finding in data["findings"]),
        sentinels=tuple(SentinelVerdict(s["label"], s["kind"], s["bytes"], s["verdict"])
                        for s in data["sentinels"]),
        error=error["message"] if error else None,
        details=data.get("details", {}),
        seconds=data.get("seconds", 0.0),
        text=encoded["text"],
        json=data,
        report=encoded.get("report", ""),
    )
