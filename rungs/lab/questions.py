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
import random
import re

from ..core.errors import check_int


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
    per_document = check_int(per_document, "per_document", low=1, high=100)
    owners: dict[str, set] = {}
    candidates = {}
    for d in documents:
        texts = ([d["title"]] if use_titles else []) + list(d.get("headings") or [])
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
    for doc_id in sorted(candidates):
        unique = [t for t in candidates[doc_id] if len(owners[t.lower()]) == 1]
        for t in rng.sample(unique, min(per_document, len(unique))):
            out.append({"id": f"k{len(out) + 1:04d}", "question": t, "kind": "known-item",
                        "judged": {doc_id: 2}, "relevant": {doc_id: 2}})
    return out


def write_questions(questions: list[dict], path) -> None:
    """Save questions in the handbook's format (one JSON object a line: id, question, kind, judgments)."""
    with open(path, "w", encoding="utf-8") as out:
        for q in questions:
            record = {"id": q["id"], "question": q["question"], "kind": q.get("kind", "lexical"),
                      "judgments": q.get("judged") or q["relevant"]}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
