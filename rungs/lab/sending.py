"""What N3 sends the model, knob by knob, measured without a model; and the answers its benchmark stored.

What it is for: N3's two passage knobs — how many passages (``max_passages``) and
where each is cut (``max_chars``) — decide what the model can read at all. Turning
them needs no model to see what they reshuffle: ``what_is_sent`` builds the very
prompt the rung would send and says what it holds — its sentences, its tokens
(estimated at four characters a token, as ``rungs.model.estimate_tokens`` does when an
endpoint reports none), whether a page judged to answer is in it, whether every key
fact of the reference is. ``sweep`` does it for every judged question and a list of
settings; ``stored_answers`` reads the benchmark's log of real answers
(``benchmarks/results/answers*.jsonl``) for what only a model can say: the share right.
Taught in notebook 03, « The passages: how many, and how long ».

Cost: the prompt of one question in the pointing modes ranks its sentences (BM25 and
the encoder over a few dozen sentences): tens of milliseconds; a sweep of six settings
over the 155 questions, about half a minute on one core. Reading a log: milliseconds.
"""

from __future__ import annotations

import json

from .. import rag
from ..core import paths
from ..core.errors import check_choice
from ..model import estimate_tokens
from .answers import score_answer

#: The grade a judged page has when it answers the question (1: it helps; 0: it does not).
ANSWERS = 2


def what_is_sent(question: dict, passages: list[dict], *, max_passages: int = rag.MAX_PASSAGES,
                 max_chars: int = rag.MAX_CHARS, mode: str = rag.DEFAULT_MODE) -> dict:
    """The prompt N3 would send for ``question`` (a judged question) and ``passages``, and what it holds.

    ``{"ids", "sentences", "tokens", "answering_sent", "facts_sent"}``: the passage ids sent, the
    sentences numbered (``None`` in the free mode, which sends passages whole), the prompt's tokens
    (estimated), whether a page graded 2 (``question["relevant"]``) is among those sent, and whether every key fact of the
    reference is in the text the model reads (``None`` for a question no page answers).
    """
    check_choice(mode, "mode", rag.MODES)
    sent = rag.prepare_passages(passages, max_passages, max_chars)
    numbered = rag.sentences_for(question["question"], sent) if mode.startswith("pointing") else None
    prompt = rag.build_prompt(question["question"], sent, mode=mode, sentences=numbered)
    # What the model reads: the sentences numbered, or the passages whole in the free mode.
    read = " ".join(s["text"] for s in numbered) if numbered is not None else " ".join(p["text"] for p in sent)
    answering = {page for page, grade in question["relevant"].items() if grade >= ANSWERS}
    facts = score_answer(read, question, [])["facts"] if question["key_facts"] else None
    return {"ids": [p["id"] for p in sent], "sentences": None if numbered is None else len(numbered),
            "tokens": estimate_tokens([{"role": "user", "content": prompt}]),
            "answering_sent": bool(answering & {p["id"] for p in sent}) if answering else None,
            "facts_sent": None if facts is None else all(facts.values())}


def sweep(questions: list[dict], passages: dict[str, list[dict]], settings: list[dict],
          mode: str = rag.DEFAULT_MODE) -> list[dict]:
    """One row a setting (``{"max_passages", "max_chars"}``): means over ``questions`` of ``what_is_sent``.

    ``passages`` maps each question id to its retrieved passages, best first (retrieve once, cut many
    times: the knobs act after retrieval). Each row: the setting, ``sentences`` and ``tokens`` (means),
    ``answering_sent`` and ``facts_sent`` (shares of the questions a page answers), and ``per_question``.
    """
    rows = []
    for setting in settings:
        seen = {q["id"]: what_is_sent(q, passages[q["id"]], mode=mode, **setting) for q in questions}
        answerable = [s for s in seen.values() if s["facts_sent"] is not None]
        counted = [s["sentences"] for s in seen.values() if s["sentences"] is not None]
        rows.append({**setting,
                     "sentences": sum(counted) / len(counted) if counted else None,
                     "tokens": sum(s["tokens"] for s in seen.values()) / len(seen),
                     "answering_sent": sum(bool(s["answering_sent"]) for s in answerable) / len(answerable),
                     "facts_sent": sum(s["facts_sent"] for s in answerable) / len(answerable),
                     "per_question": seen})
    return rows


def stored_answers(name: str = "answers.jsonl") -> dict[tuple[str, str], dict]:
    """The benchmark's log of real answers, one per ``(configuration, question id)`` (the last line wins)."""
    path = paths.in_checkout("benchmarks", "results", name, what="the answer benchmark's log")
    log = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            log[r["config"], r["id"]] = r  # a rerun of one answer replaces the earlier line
    return log
