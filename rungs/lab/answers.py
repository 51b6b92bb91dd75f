"""The answer mark: a generated answer held against the question's reference, by a rule a learner can read.

What it is for: N3's answers are text, so « right » needs a rule. An answer is
right when it states every key fact of the question's reference (after the
normalisation of ``answer_words``: folded words, numbers as people write them,
units kept), or, for a question no page answers, when it says « je ne sais
pas ». Citations are scored beside it (precision and recall against the pages
judged to answer). ``answer_report`` sums many marks up.

This is the one answer matcher of the collection: the tests of the ground
truth use it too.

Cost: linear in the answer's words times the fact's words (facts are short).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..core.errors import BadArgument, check_text
from ..core.text import tokenise
from ..rag import is_no_answer
from .metrics import check_relevant

#: Number words an answer may spell out; after normalisation « trois mois » and « 3 mois » are the same fact.
NUMBER_WORDS = {"deux": "2", "trois": "3", "quatre": "4", "cinq": "5", "six": "6", "sept": "7", "huit": "8",
                "neuf": "9", "dix": "10", "onze": "11", "douze": "12", "treize": "13", "quatorze": "14",
                "quinze": "15", "seize": "16", "vingt": "20", "trente": "30", "quarante": "40",
                "cinquante": "50", "soixante": "60", "cent": "100", "mille": "1000", "premier": "1er"}


#: Units written as symbols are words for the rule: « 25 % » must not match « 25 ans ».
_UNITS = [(re.compile(r"€"), " euros "), (re.compile(r"%"), " pourcent "),
          (re.compile(r"\bpour\s*cent\b", re.IGNORECASE), " pourcent "), (re.compile(r"\beuro\b", re.IGNORECASE), " euros ")]
_DIGITS_LETTERS = re.compile(r"\d+|[^\d]+")


def answer_words(text: str) -> list[str]:
    """An answer as the rule reads it: folded words, number words as digits, « 1 500 » as « 1500 ».

    « 2,5 jours » and « 2.5 jours » both become ['2', '5', 'jours']: a decimal is two numbers in a row.
    « 8h30 » and « 8 h 30 » are the same words, so are « 1er » and « premier »; « € » is the word
    « euros » and « % » the word « pourcent », so a number keeps its unit.
    """
    text = check_text(text, "text", allow_none=True) or ""
    for pattern, word in _UNITS:
        text = pattern.sub(word, text)
    words = []
    for w in tokenise(text or None):
        w = NUMBER_WORDS.get(w, w)
        # Digits glued to letters are two words: « 48h » → 48 h, « 1er » → 1 er.
        words += _DIGITS_LETTERS.findall(w) if any(c.isdigit() for c in w) else [w]
    out: list[str] = []
    for w in words:
        # A group of three digits after a number of one to three digits is a thousands separator (1 500 €).
        if out and w.isdigit() and len(w) == 3 and out[-1].isdigit() and len(out[-1]) <= 3 and _grouped(out):
            out[-1] += w
        else:
            out.append(w)
    return out


def _grouped(out: list[str]) -> bool:
    # « 2,5 » is a decimal (the second part is not three digits); « 1 500 » is one number.
    return not (len(out) >= 2 and out[-2].isdigit())


#: A key fact is a few words (« 25 jours ouvrés »); a longer one is a passage, not a fact.
MAX_FACT_WORDS = 50


def has_fact(fact: str, answer: str) -> bool:
    """Does the answer state ``fact``? Variants are separated by « | »; each must appear as a run of words."""
    words = answer_words(answer)
    for variant in check_text(str(fact), "fact", max_chars=10_000).split("|"):
        want = answer_words(variant)
        # A key fact is a few words: the search below costs (answer words × fact words).
        if len(want) > MAX_FACT_WORDS:
            raise BadArgument(f"fact {variant[:60]!r}… has {len(want)} words; a key fact has at most {MAX_FACT_WORDS}")
        for i in range(len(words) - len(want) + 1):
            # « 5 jours » is not in « 2,5 jours »: a number right after a number is its decimal part.
            split_decimal = want and want[0].isdigit() and i > 0 and words[i - 1].isdigit()
            if want and words[i:i + len(want)] == want and not split_decimal:
                return True
    return False


def score_answer(answer: str | None, question: dict, cited: list[str] = ()) -> dict:
    """One generated answer held against the question's reference: a rule a learner can read.

    - ``abstained``: the answer is « je ne sais pas » (or none at all);
    - ``correct``: for a question no page answers, abstaining; otherwise, not
      abstaining and stating every key fact (``has_fact``);
    - ``facts``: each key fact → found or not (the reason an answer is wrong);
    - citations, for an answered question: ``citation_precision`` (cited pages
      that hold the evidence, or at least help, over cited pages) and
      ``citation_recall`` (evidence pages cited over evidence pages). A cited
      passage id « page#3 » counts as its page.
    """
    check_text(answer, "answer", allow_none=True)
    if not isinstance(question, Mapping) or "id" not in question:
        raise BadArgument("question must be a question as load_questions returns it (a dict with an 'id')")
    if isinstance(cited, (str, bytes)) or not isinstance(cited, Iterable):
        raise BadArgument(f"cited must be a list of the ids the answer cites, not {type(cited).__name__}")
    relevant = check_relevant(question.get("relevant") or {})
    text = answer or ""
    abstained = not text.strip() or is_no_answer(text)
    answerable = bool(relevant)
    facts = {f: has_fact(f, text) for f in question.get("key_facts", [])} if answerable else {}
    correct = (not abstained and all(facts.values()) and bool(facts)) if answerable else abstained
    out = {"id": question["id"], "answerable": answerable, "abstained": abstained, "correct": correct,
           "facts": facts, "citation_precision": None, "citation_recall": None}
    pages = list(dict.fromkeys(str(c).split("#")[0] for c in cited))
    evidence = {e["page"] for e in question.get("evidence", [])}
    if answerable and not abstained and pages:
        useful = evidence | {p for p, g in relevant.items() if g > 0}
        out["citation_precision"] = sum(p in useful for p in pages) / len(pages)
        out["citation_recall"] = sum(p in pages for p in evidence) / len(evidence) if evidence else None
    elif answerable and not abstained:
        out["citation_precision"], out["citation_recall"] = 0.0, 0.0 if evidence else None
    return out


def answer_report(scored: list[dict]) -> dict:
    """The scores of many answers, summed up: accuracy, abstention where right and where wrong, citations."""
    answerable = [s for s in scored if s["answerable"]]
    unanswerable = [s for s in scored if not s["answerable"]]
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    return {"answers": len(scored),
            "accuracy": mean([s["correct"] for s in scored]),
            "correct_answerable": mean([s["correct"] for s in answerable]),
            "abstained_when_answerable": mean([s["abstained"] for s in answerable]),
            "abstained_when_unanswerable": mean([s["abstained"] for s in unanswerable]),
            "citation_precision": mean([s["citation_precision"] for s in answerable if s["citation_precision"] is not None]),
            "citation_recall": mean([s["citation_recall"] for s in answerable if s["citation_recall"] is not None]),
            "answerable": len(answerable), "unanswerable": len(unanswerable)}
