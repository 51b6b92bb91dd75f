"""What one indexing run did, file by file: what it read, what it skipped and why, what it cost.

What it is for: a learner runs ``python -m rungs index FOLDER`` and must see,
in a few lines, what is now searchable and what is not, and why — on a folder
of a few files or of thousands. ``str(report)`` is the summary: counts,
then each kind of news (added, not indexed for one reason, the same content
as another file, boilerplate left out, a warning about a file's text) with
its first few names; ``report.full()`` lists every file, and the command line
writes it to a file beside the index (``index.sqlite.report.txt``).

Cost: nothing.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field

from .walk import Skipped

#: How many names a summary line shows before « and N more ».
SHOWN = 3
#: Up to this many files of news, the summary names each one on its own line.
ONE_A_LINE = 12


def _kind(reason: str) -> str:
    """What a reason is about, without what is particular to one file (its numbers, its details)."""
    head = re.split(r" \(|: ", reason, maxsplit=1)[0]
    return re.sub(r"\d[\d.,]*", "N", head)


def _common(details: list[str]) -> str:
    """What every detail of a group says: the whole detail if they are one, else their common words."""
    if len(set(details)) == 1:
        return details[0]
    prefix = os.path.commonprefix(details)
    prefix = prefix[:prefix.rfind(" ")] if " " in prefix else ""
    return prefix.rstrip(" (:,;") if len(prefix) >= 12 else ""


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:SHOWN])
    return shown + (f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else "")


@dataclass
class IndexReport:
    """What one indexing run did, file by file: what it read, what it skipped and why, what it cost."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    touched: list[str] = field(default_factory=list)  # a new modification time, the same content: not re-read
    skipped: list[Skipped] = field(default_factory=list)
    same: list[tuple] = field(default_factory=list)    # (file, the file whose bytes it repeats): indexed once
    notes: list[tuple] = field(default_factory=list)   # (file, what to know about its text) for the files read
    dropped: Counter = field(default_factory=Counter)  # boilerplate left out this run: kind → characters or pages
    dropped_files: Counter = field(default_factory=Counter)  # kind → how many files had some
    passages: int = 0          # passages in the index after the run
    documents: int = 0         # documents in the index after the run
    read: int = 0              # files read (parsed) this run
    encoded: int = 0           # passages encoded this run (the others came from the vector cache)
    seconds: float = 0.0
    rebuilt: str = ""          # why every file was read again, if it was
    written: str = ""          # the file beside the index that lists every file, if it was written

    def noted(self, rel: str, doc: dict) -> None:
        """Keep what a reader said about one file: its notes, and the boilerplate it left out."""
        self.notes += [(rel, note) for note in doc.get("notes") or ()]
        for kind, amount in (doc.get("dropped") or {}).items():
            if amount:
                self.dropped[kind] += amount
                self.dropped_files[kind] += 1

    def _head(self) -> list[str]:
        lines = [f"every file read again: {self.rebuilt}"] if self.rebuilt else []
        lines.append(f"{self.documents} documents, {self.passages} passages in the index; this run: "
                     f"{len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed, "
                     f"{self.unchanged} unchanged; {self.read} read, {self.encoded} passages encoded")
        return lines

    def _news(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """Each section of news: its label, and its (file, detail) rows."""
        return [("added", [(p, "") for p in self.added]), ("changed", [(p, "") for p in self.changed]),
                ("removed", [(p, "") for p in self.removed]),
                ("same content, new date (not re-read)", [(p, "") for p in self.touched]),
                (f"not indexed ({len(self.skipped)})", [(s.path, s.reason) for s in self.skipped]),
                (f"indexed once: the same bytes as another file ({len(self.same)})",
                 [(p, f"same as {o}") for p, o in self.same]),
                (f"read, with a note ({_files(len({p for p, _ in self.notes}))})", list(self.notes))]

    def _dropped(self) -> list[str]:
        if not self.dropped:
            return []
        said = {"navigation": "characters of navigation (menus, sidebars, footers)",
                "pilcrows": "« ¶ » permalinks", "contents pages": "contents or index pages (dot leaders)",
                "contents": "characters of generated tables of contents"}
        parts = [f"{n:,} {said.get(kind, kind)} in {_files(self.dropped_files[kind])}"
                 for kind, n in sorted(self.dropped.items())]
        return ["boilerplate not indexed: " + "; ".join(parts)]

    def __str__(self) -> str:
        lines = self._head()
        for label, rows in self._news():
            if not rows:
                continue
            if len(rows) <= ONE_A_LINE:
                lines += _one_a_line(label, rows)
                continue
            lines.append(f"{label}:" if "(" in label else f"{label} ({len(rows)}):")
            by_kind: dict[str, list[tuple[str, str]]] = {}
            for path, detail in rows:
                by_kind.setdefault(_kind(detail) if detail else "", []).append((path, detail))
            for kind, group in sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                shown = _common([d for _, d in group]) or kind  # what they all say, else what differs as N
                names = _names([p for p, _ in group])
                lines.append(f"  {len(group)} × {shown}: {names}" if shown else f"  {names}")
        lines += self._dropped()
        if self.written:
            lines.append(f"every file, one a line: {self.written} (beside the index)")
        return "\n".join(lines)

    def full(self) -> str:
        """Every file of every kind of news, one a line (what ``str`` summarises)."""
        lines = self._head()
        for label, rows in self._news():
            if rows:
                lines.append(f"{label}:")
                lines += [f"  {path}" + (f": {detail}" if detail else "") for path, detail in rows]
        return "\n".join(lines + self._dropped())

    def __repr__(self) -> str:  # shows as its text in a notebook
        return str(self)


def _one_a_line(label: str, rows: list) -> list[str]:
    if any(detail for _, detail in rows):
        return [f"{label}:"] + [f"  {path}: {detail}" for path, detail in rows]
    if len(label) < 9:
        return [f"  {label:<8} {path}" for path, _ in rows]
    return [f"  {path}: {label}" for path, _ in rows]
