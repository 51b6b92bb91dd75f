"""What one indexing run did, file by file: what it read, what it skipped and why, what it cost.

What it is for: a learner runs ``python -m rungs index FOLDER`` and must see,
in a few lines, what is now searchable and what is not, and why.

Cost: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .walk import Skipped


@dataclass
class IndexReport:
    """What one indexing run did, file by file: what it read, what it skipped and why, what it cost."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    touched: list[str] = field(default_factory=list)  # a new modification time, the same content: not re-read
    skipped: list[Skipped] = field(default_factory=list)
    passages: int = 0          # passages in the index after the run
    documents: int = 0         # documents in the index after the run
    read: int = 0              # files read (parsed) this run
    encoded: int = 0           # passages encoded this run (the others came from the vector cache)
    seconds: float = 0.0
    rebuilt: str = ""          # why every file was read again, if it was

    def __str__(self) -> str:
        lines = []
        if self.rebuilt:
            lines.append(f"every file read again: {self.rebuilt}")
        lines.append(f"{self.documents} documents, {self.passages} passages in the index; this run: "
                     f"{len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed, "
                     f"{self.unchanged} unchanged; {self.read} read, {self.encoded} passages encoded")
        for label, paths in (("added", self.added), ("changed", self.changed), ("removed", self.removed),
                             ("same content, new date (not re-read)", self.touched)):
            for p in paths:
                lines.append(f"  {label:<8} {p}" if len(label) < 9 else f"  {p}: {label}")
        if self.skipped:
            lines.append(f"not indexed ({len(self.skipped)}):")
            unsupported: dict[str, int] = {}
            for s in self.skipped:
                if s.reason.startswith("unsupported type") and len(self.skipped) > 12:
                    unsupported[s.reason] = unsupported.get(s.reason, 0) + 1  # 300 images: one line, not 300
                else:
                    lines.append(f"  {s.path}: {s.reason}")
            for reason, n in unsupported.items():
                lines.append(f"  {n} file(s): {reason}")
        return "\n".join(lines)

    def __repr__(self) -> str:  # shows as its text in a notebook
        return str(self)
