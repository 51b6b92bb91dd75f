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
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from .. import rag
from ..core import paths
from ..core.errors import BadArgument, check_text
from .metrics import check_questions
from ..model import estimate_tokens
from .answers import score_answer

#: The grade a judged page has when it answers the question (1: it helps; 0: it does not).
ANSWERS = 2


def what_is_sent(question: dict, passages: list[dict], *, max_passages: int = rag.MAX_PASSAGES,
                 max_chars: int = rag.MAX_CHARS, mode: str = rag.MODEL_MODE) -> dict:
    """The prompt N3 would send for ``question`` (a judged question) and ``passages``, and what it holds.

    ``{"ids", "sentences", "tokens", "answering_sent", "facts_sent"}``: the passage ids sent, the
    sentences numbered (``None`` in the free mode, which sends passages whole), the prompt's tokens
    (estimated), whether a page graded 2 (``question["relevant"]``) is among those sent, and whether every key fact of the
    reference is in the text the model reads (``None`` for a question no page answers).
    """
    numbers = rag.reader(mode, model=True).numbered
    question = _judged(question)
    sent = rag.prepare_passages(passages, max_passages, max_chars)
    numbered = rag.sentences_for(question["question"], sent) if numbers else None
    prompt = rag.build_prompt(question["question"], sent, mode=mode, sentences=numbered)
    # What the model reads: the sentences numbered, or the passages whole in the free mode.
    read = " ".join(s["text"] for s in numbered) if numbered is not None else " ".join(p["text"] for p in sent)
    answering = {page for page, grade in question["relevant"].items() if grade >= ANSWERS}
    facts = score_answer(read, question, [])["facts"] if question.get("key_facts") else None
    return {"ids": [p["id"] for p in sent], "sentences": None if numbered is None else len(numbered),
            "tokens": estimate_tokens([{"role": "user", "content": prompt}]),
            "answering_sent": bool(answering & {p["id"] for p in sent}) if answering else None,
            "facts_sent": None if facts is None else all(facts.values())}


def sweep(questions: list[dict], passages: dict[str, list[dict]], settings: list[dict],
          mode: str = rag.MODEL_MODE) -> list[dict]:
    """One row a setting (``{"max_passages", "max_chars"}``): means over ``questions`` of ``what_is_sent``.

    ``passages`` maps each question id to its retrieved passages, best first (retrieve once, cut many
    times: the knobs act after retrieval). Each row: the setting, ``sentences`` and ``tokens`` (means),
    ``answering_sent`` and ``facts_sent`` (shares of the questions a page answers), and ``per_question``.
    """
    questions = check_questions(questions)
    missing = [q["id"] for q in questions if not isinstance(passages, Mapping) or q["id"] not in passages]
    if missing:
        raise BadArgument(f"passages must map each question's id to its passages; it has none for {missing[:3]}")
    if isinstance(settings, (str, bytes, Mapping)) or not isinstance(settings, Iterable) or \
            not all(isinstance(setting, Mapping) for setting in settings):
        raise BadArgument("settings must be a list of settings, like [{'max_passages': 4, 'max_chars': 1500}]")
    rows = []
    for setting in settings:
        seen = {q["id"]: what_is_sent(q, passages[q["id"]], mode=mode, **setting) for q in questions}
        answerable = [s for s in seen.values() if s["facts_sent"] is not None]
        counted = [s["sentences"] for s in seen.values() if s["sentences"] is not None]
        rows.append({**setting,
                     "sentences": sum(counted) / len(counted) if counted else None,
                     "tokens": sum(s["tokens"] for s in seen.values()) / len(seen) if seen else None,
                     # None, not a division by zero, when no question of the list has a page that answers
                     "answering_sent": _share(answerable, "answering_sent"),
                     "facts_sent": _share(answerable, "facts_sent"),
                     "per_question": seen})
    return rows


def _share(seen: list[dict], key: str) -> float | None:
    return sum(bool(s[key]) for s in seen) / len(seen) if seen else None


def _judged(question) -> dict:
    """A judged question, as ``load_questions`` gives it: its text, its judgments and its key facts (a list)."""
    (question,) = check_questions([question])
    facts = question.get("key_facts") or []
    if not isinstance(facts, (list, tuple)) or not all(isinstance(f, str) for f in facts):
        raise BadArgument(f"question's key_facts must be a list of facts (text), not {type(facts).__name__}")
    return question


def stored_answers(name: str = "answers.jsonl") -> dict[tuple[str, str], dict]:
    """The benchmark's log of real answers, one per ``(configuration, question id)`` (the last line wins)."""
    check_text(name, "name")
    return read_log(paths.in_checkout("benchmarks", "results", name, what="the answer benchmark's log"))


def read_log(path) -> dict[tuple[str, str], dict]:
    """A log of the answer benchmark, one row per ``(configuration, question id)``: each line a JSON object
    naming its ``config`` and its question's ``id``; a later line replaces an earlier one (a rerun of one
    answer, the support check appended after it). A line of another shape is refused by its number."""
    if not isinstance(path, (str, os.PathLike)):
        raise BadArgument(f"path must be the answer benchmark's log (a file's path), not {type(path).__name__}")
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError, ValueError) as err:  # missing, a folder, not text, a NUL in the name
        raise BadArgument(f"path {path} cannot be read ({getattr(err, 'strerror', None) or err})") from None
    log = {}
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("config"), str) or not isinstance(row.get("id"), str):
            raise BadArgument(f"path {path}, line {n}: not a line of the answer benchmark's log "
                              "(a JSON object with its 'config' and its question's 'id')")
        log[row["config"], row["id"]] = row  # a rerun of one answer replaces the earlier line
    return log
