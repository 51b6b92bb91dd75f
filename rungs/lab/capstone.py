"""The capstone's steps (notebook 09) on any folder and any question file: a message where a step cannot work.

What it is for: the capstone runs on a folder and a question file of the learner's own — empty, one file,
only files rungs cannot read, questions that name no page, all unanswerable, one-word titles, an ``ASKED``
id that is not in the file. Each function here is one of its cells' steps; where the step cannot be
done it raises ``CapstoneError`` (a ``RungsError``) saying what to change in the folder or the file, or
it gives the result that is defined (« no question names a page: page recall is not defined »), never a
bare ``StopIteration``, ``IndexError`` or ``ZeroDivisionError``.

- ``split_questions``  notebook 09, section 2: the questions the index can answer (the others set aside), in halves
- ``worked_example``   notebook 09, section 3: the development question whose reciprocal rank the learner works by hand
- ``find_question``    notebook 09, section 5: the question ``ASKED`` names
- ``page_scores``      notebook 09, section 6: passage MRR to the right file and to the right page
- ``known_items``      notebook 09, section 7: known-item questions from the headings, against the final half
- ``abstention_sample`` notebook 09, section 8: a few answerable and unanswerable questions to ask, and the tally

Cost: what the retrievers' searches cost; nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import BadArgument, RungsError, check_int, short_repr
from . import metrics
from .questions import known_item_questions

#: The protocol's least development half: two folds of two questions (``tuning.choose``).
MIN_DEVELOPMENT = 4
_KINDS = ("lexical", "paraphrase", "unanswerable")


class CapstoneError(RungsError, ValueError):
    """A step of the capstone cannot be done on this folder or these questions; the message says what to change."""


def _ids(values, name: str) -> set[str]:
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):
        raise BadArgument(f"{name} must be a collection of ids, not {type(values).__name__} {short_repr(values)}")
    values = list(values)
    if not all(isinstance(v, str) for v in values):
        raise BadArgument(f"{name} must hold ids (text), not {short_repr(values)}")
    return set(values)


def split_questions(questions, held, *, seed: int = 0) -> dict:
    """Notebook 09, section 2: the questions (those whose judged files are all outside the index set aside), halved.

    ``held``: the ids of the index's documents. Returns ``questions`` (kept), ``aside`` (ids), ``kinds``
    (counts of the kept), ``development`` and ``final`` (``tuning.halves``, the answerable ones). Refused
    with what to do: no question, an index that holds no document, no answerable question left, or a
    development half too small for the protocol's two folds of two.
    """
    from .tuning import halves

    seed = check_int(seed, "seed")
    questions, held = metrics.check_questions(questions), _ids(held, "held")
    if not questions:
        raise CapstoneError("the questions file holds no question: write one JSON object a line, each with "
                            "an 'id', a 'question' and the 'judgments' of the file that answers it (section 2)")
    if not held:
        raise CapstoneError("the index holds no document: no file of the folder could be read (index.report says "
                            "why for each); point FOLDER at a folder of documents, or fix what the report names, "
                            "and index again")
    aside = [q["id"] for q in questions if q["relevant"] and not set(q["relevant"]) & held]
    kept = [q for q in questions if q["id"] not in aside]
    answerable = [q for q in kept if q["relevant"]]
    if not answerable:
        why = (f"{len(aside)} set aside, as no file they judge is in the index: misspelt, or not read"
               if aside else "all of them are unanswerable (empty 'judgments')")
        raise CapstoneError(f"none of your {len(questions)} questions names a file of the index ({why}): give "
                            "each question you can answer the file that answers it, « \"judgments\": "
                            "{\"path/in/the/folder\": 2} », as the report names the file")
    development, final = halves(kept, seed=seed)
    if len(development) < MIN_DEVELOPMENT:
        raise CapstoneError(f"{len(answerable)} answerable questions make a development half of "
                            f"{len(development)}; the protocol needs at least {MIN_DEVELOPMENT} (two folds of two): "
                            f"write more questions with the file that answers them (at least "
                            f"{2 * MIN_DEVELOPMENT} answerable, about as many of each kind)")
    kinds = {kind: sum(q.get("kind") == kind for q in kept) for kind in _KINDS}
    return {"questions": kept, "aside": aside, "kinds": kinds, "development": development, "final": final}


def _searcher(retriever, name: str = "retriever"):
    search = getattr(retriever, "search", None)
    if not callable(search):
        raise BadArgument(f"{name} must be a retriever (index.retriever(...)), not {type(retriever).__name__}")
    return search


def worked_example(retriever, questions, *, limit: int = 10) -> dict:
    """Notebook 09, section 3: the first question whose judged file ``retriever`` ranks below first, and its ranking.

    When it ranks every file first or misses it (a folder of one file, questions that are its titles),
    the first question it ranks first, else the first it misses, and ``note`` says so. Returns
    ``question``, ``hits``, ``rr`` (the reciprocal rank) and ``note`` (None when the question is below
    first). The exercise of notebook 09 checks with the same rule.
    """
    search = _searcher(retriever)
    limit = check_int(limit, "limit", low=1, high=1000)
    answerable = [q for q in metrics.check_questions(questions) if q["relevant"]]
    if not answerable:
        raise CapstoneError("no development question names a file: there is no rank to show (section 2 says "
                            "how many of your questions are answerable)")
    first = missed = None
    for q in answerable:
        hits = search(q["question"], limit=limit)
        rr = metrics.reciprocal_rank(hits, q["relevant"])
        if 0 < rr < 1:
            return {"question": q, "hits": hits, "rr": rr, "note": None}
        if rr == 1 and first is None:
            first = {"question": q, "hits": hits, "rr": rr}
        elif rr == 0 and missed is None:
            missed = {"question": q, "hits": hits, "rr": rr}
    if first is not None:
        return {**first, "note": f"every one of the {len(answerable)} questions has its file first or not in "
                                 f"the top {limit}: here is one whose file is first (reciprocal rank 1)"}
    return {**missed, "note": f"not one of the {len(answerable)} questions has its file in the top {limit}: "
                              "here is the first (reciprocal rank 0); are the judged paths the report's?"}


def find_question(questions, asked, *, aside=()) -> dict:
    """Notebook 09, section 5: the question whose id is ``asked``; refused by name, with the ids there are."""
    questions, aside = metrics.check_questions(questions), _ids(aside, "aside")
    if not isinstance(asked, str):
        raise BadArgument(f"asked must be a question's id (text such as \"q06\"), not {type(asked).__name__} "
                          f"{short_repr(asked)}")
    for q in questions:
        if q["id"] == asked:
            return q
    if asked in aside:
        raise CapstoneError(f"ASKED = {asked!r} was set aside in section 2: its judged files are not in the index; "
                            "ask another question, or fix its 'judgments'")
    ids = [q["id"] for q in questions]
    shown = ", ".join(ids[:8]) + (f" … ({len(ids)} in all)" if len(ids) > 8 else "")
    raise CapstoneError(f"ASKED = {short_repr(asked)} is the id of none of your questions ({shown or 'none'}): "
                        "set ASKED to one of them, best one with an 'answer' and 'key_facts'")


def _pages(q: dict) -> dict:
    pages = q.get("pages") or {}
    if not isinstance(pages, Mapping) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in pages.values()):
        raise BadArgument(f"question {q['id']}'s pages must map a file's path to its page number, not "
                          f"{short_repr(pages)}")
    return dict(pages)


def _where(hit) -> tuple:
    """A passage-level hit's file and page (page None when it has none)."""
    path = hit.get("path") if hasattr(hit, "get") else None
    if not isinstance(path, str):
        raise BadArgument(f"the retrievers' hits must be passages with a 'path' (search(..., level='passage')), "
                          f"not {type(hit).__name__} {short_repr(hit)}")
    return path, hit.get("page")


def page_scores(retrievers, questions, *, limit: int = 10) -> dict:
    """Notebook 09, section 6: for each retriever, passage MRR to the right file and to the right page, on the questions
    that name their pages (``"pages": {"path": N}``). Returns ``questions`` (how many name a page),
    ``scores`` (name → {"file", "page"}; empty when none does) and ``text``, what the cell prints.
    """
    if not isinstance(retrievers, Mapping) or not retrievers:
        raise BadArgument(f"retrievers must be a dict of name → retriever, not {short_repr(retrievers)}")
    searches = {str(name): _searcher(r, "retrievers") for name, r in retrievers.items()}
    limit = check_int(limit, "limit", low=1, high=1000)
    paged = [(q, _pages(q)) for q in metrics.check_questions(questions)]
    paged = [(q, pages) for q, pages in paged if q["relevant"] and pages]
    if not paged:
        return {"questions": 0, "scores": {}, "text": "no question names its PDF page (« \"pages\": {\"path\": N} "
                "», section 6): page recall is not defined; name the page in questions about long PDFs to "
                "measure it"}
    scores, lines = {}, [f"{len(paged)} questions name their PDF page"]
    for name, search in searches.items():
        file_rr, page_rr = [], []
        for q, pages in paged:
            hits = search(q["question"], limit=limit, level="passage")
            if not isinstance(hits, (list, tuple)):
                raise BadArgument(f"the retrievers' search must return a list of hits, not {type(hits).__name__}")
            where = [_where(h) for h in hits]
            file_rr.append(next((1 / r for r, (path, _) in enumerate(where, 1) if path in pages), 0.0))
            page_rr.append(next((1 / r for r, (path, page) in enumerate(where, 1)
                                 if path in pages and pages[path] == page), 0.0))
        scores[name] = {"file": sum(file_rr) / len(paged), "page": sum(page_rr) / len(paged)}
        lines.append(f"  {name:<18} passage MRR: the right file {scores[name]['file']:.3f}, "
                     f"the right page {scores[name]['page']:.3f}")
    return {"questions": len(paged), "scores": scores, "text": "\n".join(lines)}


def known_items(documents, runs, final, *, per_document: int = 1, seed: int = 0) -> dict:
    """Notebook 09, section 7: known-item questions from titles and headings; each run's MRR on them and on ``final``.

    ``documents``: the index (or its documents); ``runs``: name → a function of the question's text.
    Returns ``known`` (the questions), ``scores`` (name → {"known", "final"}; empty when no title or
    heading makes a question) and ``text``, what the cell prints.
    """
    known = known_item_questions(documents, per_document=per_document, seed=seed)
    if not isinstance(runs, Mapping) or not runs or not all(callable(r) for r in runs.values()):
        raise BadArgument(f"runs must be a dict of name → a function of the question's text, not {short_repr(runs)}")
    final = metrics.check_questions(final)
    if not known:
        return {"known": [], "scores": {}, "text": "no known-item question: no title or heading of two words or "
                "more belongs to one document only (one-word titles, or files without headings), so there is "
                "nothing to compare your questions with"}
    first = known[0]
    lines = [f"{len(known)} known-item questions, e.g. {first['question']!r} → {next(iter(first['relevant']))}"]
    scores = {}
    for name, run in runs.items():
        scores[name] = {"known": metrics.evaluate(run, known)["MRR"],
                        "final": metrics.evaluate(run, final)["MRR"] if final else None}
        mine = "no final half" if scores[name]["final"] is None else f"{scores[name]['final']:.3f}"
        lines.append(f"  {name:<18} MRR on known-item questions {scores[name]['known']:.3f}, on your final half {mine}")
    return {"known": known, "scores": scores, "text": "\n".join(lines)}


def abstention_sample(questions, final, *, each: int = 3) -> list[dict]:
    """Notebook 09, section 8: the first ``each`` unanswerable questions (by id) and the first ``each`` of the
    final half with key facts to mark: what the decision is asked, on the learner's own questions."""
    each = check_int(each, "each", low=1, high=100)
    questions, final = metrics.check_questions(questions), metrics.check_questions(final)
    unanswerable = sorted((q for q in questions if q.get("kind") == "unanswerable"), key=lambda q: q["id"])
    answerable = sorted((q for q in final if q.get("key_facts")), key=lambda q: q["id"])
    return unanswerable[:each] + answerable[:each]


def abstention_tally(rows) -> str:
    """The lines notebook 09, section 8 prints from ``rows``: dicts of a question's ``kind``, its answer's
    ``status`` and whether it is ``right``."""
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) and {"kind", "status", "right"} <= set(r)
                                             for r in rows):
        raise BadArgument(f"rows must be a list of dicts with kind, status and right, not {short_repr(rows)}")
    lines = []
    for side, pick in (("unanswerable", lambda r: r["kind"] == "unanswerable"),
                       ("answerable", lambda r: r["kind"] != "unanswerable")):
        mine = [r for r in rows if pick(r)]
        if not mine:
            lines.append(f"no {side} question to ask: "
                         + ("add a few that nothing in the folder answers" if side == "unanswerable"
                            else "give a few of the final half an answer and key facts"))
            continue
        idk = sum(r["status"] != "answered" for r in mine)
        lines.append(f"{side}: {len(mine)} asked, « je ne sais pas » to {idk}, right on {sum(r['right'] for r in mine)}")
    return "\n".join(lines)
