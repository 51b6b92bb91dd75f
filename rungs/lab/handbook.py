"""The handbook: pages to search and questions to judge the search by.

A page is one Markdown file in ``rungs/lab/data/handbook/pages/`` with a small front matter:

    ---
    id: conges-payes
    title: Congés payés
    section: Congés
    ---
    Chaque salarié acquiert 2,5 jours ouvrables …

The questions (``rungs/lab/data/handbook/questions.jsonl``) are the ground truth of every
evaluation in the collection: one JSON object per line with ``id``,
``question``, ``english`` (a gloss), ``kind`` (``lexical``: shares a content
word with its page; ``paraphrase``: shares no word root with it;
``unanswerable``: no page answers it), ``judgments`` (page id → grade: 2
answers it, 1 helps, 0 judged not relevant; pooled from several systems, see
``rungs/lab/data/handbook/README.md``), and the reference answer: ``answer``, ``key_facts``,
``evidence``.

Cost: reading 70 small files, a few milliseconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..core import paths
from ..core.display import safe_text
from ..core.errors import BadArgument, RungsError, short_repr

#: The handbook travels inside the package (``rungs/lab/data/handbook/``): an installed rungs finds it too.
HANDBOOK = paths.data("handbook")
_FIELDS = ("id", "title", "section")


class HandbookError(RungsError, ValueError):
    """A page or a question file cannot be read; the message names the file and the fix."""


def _parse(path: Path) -> dict:
    try:
        # utf-8-sig: a byte-order mark (what some Windows editors write first) is not part of the text.
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise HandbookError(f"{path.name}: not UTF-8 text (byte {err.start}): save it as UTF-8") from None
    except OSError as err:  # no permission, removed while read
        raise HandbookError(f"{path.name}: cannot be read ({err.strerror or err})") from None
    lines = text.split("\n")
    # The front matter is the block between the first two lines that hold only ---.
    if not lines or lines[0].strip() != "---":
        raise HandbookError(f"{path.name}: the file must start with a '---' line (front matter)")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise HandbookError(f"{path.name}: the front matter is never closed by a '---' line") from None
    meta = {}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            raise HandbookError(f"{path.name}, line {number}: expected 'key: value', got {line!r}")
        meta[key.strip()] = value.strip()
    missing = [f for f in _FIELDS if not meta.get(f)]
    if missing:
        raise HandbookError(f"{path.name}: front matter lacks {', '.join(missing)}")
    body = "\n".join(lines[end + 1:]).strip()
    # An empty body is kept as None, not "": a page can exist before it is written.
    return {"id": meta["id"], "title": meta["title"], "body": body or None, "section": meta["section"]}


def _exists(path: Path, test) -> bool:
    """``path.is_dir()`` or ``path.is_file()``, False for a name the system refuses (too long: OSError)."""
    try:
        return test(path)
    except OSError:
        return False


def load_pages(path: str | Path | None = None) -> list[dict]:
    """Every page of the handbook, sorted by id: ``id``, ``title``, ``body`` (or None), ``section``."""
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise BadArgument(f"path must be a folder's path, not {type(path).__name__} {short_repr(path)}")
    folder = Path(path) if path is not None else HANDBOOK / "pages"
    if not _exists(folder, Path.is_dir):
        raise HandbookError(f"{folder}: no such folder of pages")
    pages, seen = [], {}
    # Regular files only: a FIFO named x.md would wait forever for a writer, a socket or a link loop fail.
    for file in sorted(f for f in folder.glob("*.md") if _exists(f, Path.is_file)):
        page = _parse(file)
        if page["id"] in seen:
            raise HandbookError(f"{file.name}: id {page['id']!r} is already used by {seen[page['id']]}")
        seen[page["id"]] = file.name
        pages.append(page)
    # Sorted by id so that every rung sees the pages in the same order.
    return sorted(pages, key=lambda p: p["id"])


def _wrong_field(q: dict) -> str | None:
    """What is wrong with a question's optional fields, in words (None: nothing): never split a string into letters."""
    facts, evidence, pages, answer = q.get("key_facts"), q.get("evidence"), q.get("pages"), q.get("answer")
    if facts is not None and not (isinstance(facts, list) and all(isinstance(f, str) for f in facts)):
        hint = " (one string per fact, in a list: [\"12\"], never \"12\")" if isinstance(facts, str) else ""
        return f"key_facts must be a list of strings, not a {type(facts).__name__}{hint}"
    if evidence is not None and not (isinstance(evidence, list) and all(
            isinstance(e, dict) and isinstance(e.get("page"), str) and isinstance(e.get("text"), str)
            for e in evidence)):
        return f"evidence must be a list of {{'page', 'text'}} objects, not a {type(evidence).__name__}"
    if pages is not None and not (isinstance(pages, dict) and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in pages.values())):
        return (f"pages must map a file's path to its page number, not a {type(pages).__name__} "
                "(« \"pages\": {\"guide.pdf\": 5} »)")
    if answer is not None and not isinstance(answer, str):
        return f"answer must be a string (or null), not a {type(answer).__name__}"
    # kind, english and added are read as text (tuning.halves sorts added): a 5 or a true is a slip, named here
    for name in ("kind", "english", "added"):
        if q.get(name) is not None and not isinstance(q[name], str):
            return f"{name} must be a string (or left out), not a {type(q[name]).__name__} {short_repr(q[name])}"
    return None


def _question(line: str, where: str, seen: set) -> dict:
    """One line of a question file as a question, its fields checked; else a refusal naming the line."""
    try:
        q = json.loads(line)
    except json.JSONDecodeError as err:
        raise HandbookError(f"{where}: not JSON ({err.msg})") from None
    except RecursionError:  # a line nested thousands deep is JSON no question is written in
        raise HandbookError(f"{where}: nested too deep to be a question") from None
    if not isinstance(q, dict) or not q.get("id") or not q.get("question"):
        raise HandbookError(f"{where}: needs at least 'id' and 'question'")
    if not isinstance(q["id"], str) or not isinstance(q["question"], str):
        raise HandbookError(f"{where}: 'id' and 'question' must be strings")
    if not q["id"].isprintable() or not q["id"].strip():  # an id is printed in tables, cells and reports
        raise HandbookError(f"{where}: the id {short_repr(q['id'])} holds control characters or only spaces: "
                            "write it in plain letters and digits (« q01 »)")
    if q["id"] in seen:
        raise HandbookError(f"{where}: duplicate question id {q['id']!r}")
    seen.add(q["id"])
    if (wrong := _wrong_field(q)) is not None:
        raise HandbookError(f"{where}: {q['id']}: {wrong}")
    return q


def load_questions(path: str | Path | None = None) -> list[dict]:
    """The judged questions: ``id``, ``question``, ``kind``, ``judged`` and ``relevant``, and the reference answer.

    ``judged`` maps every page a judge read for the question to its grade
    (2 answers it, 1 helps, 0 read and judged not relevant: a zero is
    information too); ``relevant`` keeps the pages graded 1 or 2, which is what
    the metrics use. ``answer`` (a short reference answer in French, ``None``
    when no page answers), ``key_facts`` (what an answer must say to be right),
    ``evidence`` (page id and the sentence that supports the answer),
    ``english`` (a gloss of the question) and ``pages`` (a file's path → the
    PDF page that answers) are there when the file has them.
    """
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise BadArgument(f"path must be a file's path, not {type(path).__name__} {short_repr(path)}")
    file = Path(path) if path is not None else HANDBOOK / "questions.jsonl"
    shown = safe_text(file.name)  # the file's name as a terminal may show it: its escapes must not act
    if not _exists(file, Path.is_file):  # not a folder, a FIFO, a socket: a FIFO would be waited on forever
        raise HandbookError(f"{safe_text(str(file))}: no such file of questions")
    try:
        raw_text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise HandbookError(f"{shown}: not UTF-8 text (byte {err.start}): save it as UTF-8") from None
    except OSError as err:  # no permission, removed while read
        raise HandbookError(f"{shown}: cannot be read ({err.strerror or err})") from None
    questions, seen = [], set()
    # Split on newlines only: U+2028, which json.dumps(ensure_ascii=False) leaves raw inside a string,
    # is a line break to str.splitlines() but not to JSON Lines.
    for number, line in enumerate(raw_text.split("\n"), start=1):
        if not line.strip():
            continue
        q = _question(line, f"{shown}, line {number}", seen)
        judged = q.get("judgments", q.get("relevant")) or {}
        if not isinstance(judged, dict) or any(isinstance(g, bool) or g not in (0, 1, 2) for g in judged.values()):
            raise HandbookError(f"{shown}, line {number}: grades must be 0, 1 or 2")
        questions.append({"id": q["id"], "question": q["question"], "kind": q.get("kind") or "lexical",
                          "judged": dict(judged), "relevant": {d: g for d, g in judged.items() if g > 0},
                          "answer": q.get("answer"), "key_facts": list(q.get("key_facts") or []),
                          "evidence": list(q.get("evidence") or []), "english": q.get("english"),
                          # The PDF page each file answers on (notebook 09, section 6), when the question names it.
                          **({"pages": dict(q["pages"])} if q.get("pages") else {}),
                          # When a question joined the collection: tuning.halves splits later ones apart.
                          **({"added": q["added"]} if q.get("added") else {})})
    return questions
