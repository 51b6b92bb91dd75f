"""Questions about a collection nobody has judged: known-item questions made from titles and headings.

What it is for: tuning on your own folder needs questions with answers.
``known_item_questions`` makes them from the documents themselves — each
question is a heading (or a title) of one document, judged ``{that document:
2}`` — and says what that biases. ``write_questions`` saves them in the
handbook's format, so every tool of the lab reads them.

Cost: one pass over the documents' headings.
"""

from __future__ import annotations

import json
import os
import random
import re

from ..core.documents import check_documents
from ..core.errors import BadArgument, check_bool, check_int, check_text
from .metrics import check_questions, check_relevant


def known_item_questions(documents, *, per_document: int = 1, seed: int = 0, min_words: int = 2,
                         use_titles: bool = True) -> list[dict]:
    """Known-item questions made from titles and headings: « find the document this heading is in ».

    Each question is a heading (or a title) of one document, judged ``{that document: 2}``. A heading
    found in two documents is ambiguous and dropped. What it biases, say it when you report a number:
    the question *is* the document's words, so the keyword leg is favoured, and titles (weighted, and
    repeated in every passage) favour it more. Good to tune on; not a measure of paraphrase.
    """
    if hasattr(documents, "documents"):
        documents = documents.documents()
    documents = check_documents(documents)  # the one rule: dicts with an id, text fields that are text
    per_document = check_int(per_document, "per_document", low=1, high=100)
    min_words = check_int(min_words, "min_words", low=1, high=100)
    check_int(seed, "seed")
    check_bool(use_titles, "use_titles")
    owners: dict[str, set] = {}
    candidates = {}
    for i, d in enumerate(documents):
        headings = d.get("headings") or []
        if isinstance(headings, str) or not isinstance(headings, (list, tuple)):
            raise BadArgument(f"documents[{i}]'s headings must be a list of headings, not {type(headings).__name__}")
        texts = ([d.get("title") or ""] if use_titles else []) + list(headings)
        clean = []
        for t in texts:
            t = " ".join(str(t).split())
            t = re.sub(r"^[\d.\s]+(?=\D)", "", t)  # « 3.2. Calques » → « Calques »: numbers are not words people type
            if len(re.findall(r"[^\W\d_]{2,}", t)) >= min_words and t not in clean:
                clean.append(t)
        for t in clean:
            owners.setdefault(t.lower(), set()).add(d["id"])
        candidates[d["id"]] = clean
    rng = random.Random(seed)
    out = []
    for doc_id in sorted(candidates, key=str):  # ids 3 and "a" side by side: ordered as text
        unique = [t for t in candidates[doc_id] if len(owners[t.lower()]) == 1]
        for t in rng.sample(unique, min(per_document, len(unique))):
            out.append({"id": f"k{len(out) + 1:04d}", "question": t, "kind": "known-item",
                        "judged": {doc_id: 2}, "relevant": {doc_id: 2}})
    return out


def write_questions(questions: list[dict], path) -> None:
    """Save questions in the handbook's format (one JSON object a line: id, question, kind, judgments).

    Every question is checked before the file is opened: a question without its fields leaves the file
    as it was."""
    questions = check_questions(questions)
    for i, q in enumerate(questions):  # what is written is what a reader of the file will accept
        check_text(q["question"], f"questions[{i}]'s question")
        check_relevant(q.get("judged") or q["relevant"])
    if not isinstance(path, (str, os.PathLike)):  # open(5, "w") would write to file descriptor 5
        raise BadArgument(f"path must be a file's path, not {type(path).__name__}")
    lines = [json.dumps({"id": q["id"], "question": q["question"], "kind": str(q.get("kind", "lexical")),
                         "judgments": dict(q.get("judged") or q["relevant"])}, ensure_ascii=False)
             for q in questions]
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.writelines(line + "\n" for line in lines)
    except (OSError, ValueError) as err:  # a folder, a folder that does not exist, a NUL in the name
        raise BadArgument(f"path {path} cannot be written ({getattr(err, 'strerror', None) or err})") from None
