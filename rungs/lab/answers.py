"""The answer mark: a generated answer held against the question's reference, by a rule a learner can read.

What it is for: N3's answers are text, so « right » needs a rule. An answer is
right when it states every key fact of the question's reference, or, for a
question no page answers, when it says « je ne sais pas ». A key fact is a few
words with its variants (« 3 mois | trois mois »); it is found when one
variant appears as a run of words of the answer, both read the same way by
``answer_words``: folded, each word cut to its Snowball stem (the collection's
stemmer, so « sanctionnée » states « sanction »), numbers as people write them
(« trois », « 2,50 », « 1 500 »), units as one word each (« 35 heures » is
« 35 h », « € » is « euros »), by the collection's one number reader
(``rungs.grounding.figures.read_numbers``, the figure check's): « 1.500 € » and
« 1 500 € », « 8:30 » and « 8 h 30 », « 25 pour cent » and « 25 % », « premier
mars » and « 1er mars » are the same words. A figure is found only whole: « 7 h »
is not in « 7 h 30 ». Two rules read what a trusting reader reads first: a
reference that opens « Oui » or « Non » needs an answer whose opening (its
lead-in, or its first sentence) does not say the opposite, and a lead-in may not
state a figure the reference contradicts. Citations are scored beside it, and
``correct_and_cited`` is the mark that asks for both: right, and citing a page
judged to answer or help. ``answer_report`` sums many marks up.

How far to trust it is measured, not assumed: ``benchmarks/bench_answers.py``
holds the rule against a careful reading of 150 stored answers
(``benchmarks/README.md`` gives the agreement). This is the one answer matcher
of the collection: the tests of the ground truth and the blind pass's
candidates use it too.

Cost: linear in the answer's words times the fact's words (facts are short).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from ..core.errors import BadArgument, check_text
from ..core.sentences import sentences
from ..core.text import fold, nfc, tokenise
from ..grounding import figures
from ..grounding.abstain import is_no_answer
from ..grounding.answer import Answer, Status
from .metrics import check_relevant

#: Number words and units: the collection's one vocabulary (``rungs.grounding.figures``), so the mark and the
#: figure check read « vingt-quatre heures », « 24 h », « 22 euros » and « 22 € » alike. A unit is one word
#: whatever its spelling: « 25 % » must not match « 25 ans ».
NUMBER_WORDS = figures.NUMBER_WORDS
UNITS = figures.UNITS

# A number as the one reader writes it (« 1 500 », « 1.500 », « 2,50 »), a symbol that is a unit, or a run of letters.
_TOKEN = re.compile(rf"({figures.NUMBER.pattern})|[€%]|[^\W\d_]+")

#: A key fact is a few words (« 25 jours ouvrés »); a longer one is a passage, not a fact.
MAX_FACT_WORDS = 50


def answer_words(text: str | None) -> list[str]:
    """An answer as the rule reads it: the words' stems, numbers in digits, units as one word each.

    >>> answer_words("Vingt-quatre heures, 2,50 € et trois jours et demi")
    ['24', 'h', '2.5', '€', 'et', '3.5', 'jour']

    « 2,5 », « 2.50 » and « deux et demi » are the one number '2.5' (so « 5 jours » is never found in
    « 2,5 jours »); « 1 500 » is '1500'; « 8h30 », « 8 h 30 » and « 8:30 » are the same words, so
    are « 1er » and « premier »; « € », « euro » and « euros » are '€', « heures » is 'h', « % » and
    « pour cent » '%', « années » 'an' (``rungs.grounding.figures.UNITS``), so a number keeps its unit. Every other word is folded and cut to its Snowball stem.
    """
    text = check_text(text, "text", allow_none=True) or ""
    # The collection's one number reader (the figure check's): « vingt-quatre » is 24, « 8:30 » is « 8 h 30 ».
    text = figures.read_numbers(nfc(text).lower())
    raw = [figures.number_value(m.group(1)) if m.group(1) else m.group(0) for m in _TOKEN.finditer(text)]
    return _stems(_halves(_spelled(raw)))


#: The endings of an ordinal after its digits (« 1er », « 1re », « 3e », « 3ème », « 3ième »): one word, 'e'.
_ORDINAL_ENDINGS = {"e", "er", "re", "ere", "eme", "ieme", "ème", "ère", "ième"}


def _spelled(raw: list[str]) -> list[str]:
    """Every ordinal ending after a number as the one word 'e' (« 1er » = « 1re » = « premier », read « 1e »)."""
    out = []
    for word in raw:
        if fold(word) in _ORDINAL_ENDINGS and out and out[-1][0].isdigit():
            out.append("e")
        else:
            out.append(word)
    return out


def _halves(words: list[str]) -> list[str]:
    """« 3 jours et demi » and « 3 et demi » are '3.5 jours': a half written out is a decimal."""
    out = []
    for word in words:
        if fold(word) in ("demi", "demie") and len(out) >= 2 and out[-1] == "et":
            unit = 1 if out[-2].isdigit() else 2  # « 3 et demi » or « 3 jours et demi »
            if len(out) > unit and out[-1 - unit].isdigit():
                out.pop()  # the « et »
                out[-unit] = out[-unit] + ".5"
                continue
        out.append(word)
    return out


def _stems(words: list[str]) -> list[str]:
    out = []
    for word in words:
        if word[0].isdigit():
            out.append(word)
        else:
            out += _stem(word)
    return out


@lru_cache(maxsize=50_000)
def _stem(word: str) -> tuple[str, ...]:
    # A unit is one word whatever its spelling; any other word is the collection's stem of it.
    folded = fold(word)
    return (UNITS[folded],) if folded in UNITS else tuple(tokenise(word, stem=True))


def spelled_number(words: str) -> str | None:
    """« vingt-quatre » → '24', « 2,5 » → '2.5', « un » → '1'; None when ``words`` is not one number."""
    read = answer_words(words)
    return read[0] if len(read) == 1 and read[0][0].isdigit() else None


def has_fact(fact: str, answer: str) -> bool:
    """Does the answer state ``fact``? Variants are separated by « | »; one must appear as a run of words
    (or open the answer, for a variant written « ^non »)."""
    return found_in(fact, answer_words(answer))


def found_in(fact: str, words: list[str]) -> bool:
    """``has_fact`` on words already read by ``answer_words``: a page read once, many facts looked for."""
    for variant in check_text(fact, "fact", max_chars=10_000).split("|"):
        # « ^non »: the answer must open with it — for a yes/no question that holds the word itself
        # (« Les RTT non pris… ? »), where an answer echoing the question would contain « non » anywhere.
        opening = variant.strip().startswith("^")
        want = answer_words(variant.strip().lstrip("^"))
        # A key fact is a few words: the search below costs (answer words × fact words).
        if len(want) > MAX_FACT_WORDS:
            raise BadArgument(f"fact {variant[:60]!r}… has {len(want)} words; a key fact has at most {MAX_FACT_WORDS}")
        starts = range(1) if opening else range(len(words) - len(want) + 1)
        if want and any(words[i:i + len(want)] == want and _whole(words, i, len(want)) for i in starts):
            return True
    return False


def _whole(words: list[str], i: int, n: int) -> bool:
    """Is the run ``words[i:i + n]`` a whole figure? « 7 h » is not inside « 7 h 30 », « 30 » not the minutes of
    « 8 h 30 »: a run that ends on a number or on « h » must not go on with a number, and a run that starts
    with a number must not follow one (or follow a number and « h »)."""
    last, first = words[i + n - 1], words[i]
    if (last[0].isdigit() or last == "h") and i + n < len(words) and words[i + n][0].isdigit():
        return False
    if first[0].isdigit() and i >= 1:
        before = words[i - 1]
        return not (before[0].isdigit() or (before == "h" and i >= 2 and words[i - 2][0].isdigit()))
    return True


def key_facts(question: Mapping) -> list[str]:
    """A question's key facts, checked: a list of texts (one string would be read as facts of one letter each)."""
    facts = question.get("key_facts") or []
    if isinstance(facts, (str, bytes)) or not isinstance(facts, Iterable) or isinstance(facts, Mapping):
        raise BadArgument(f"question {question.get('id')!r}: key_facts must be a list of facts, like "
                          f"['3 mois | trois mois'], not {type(facts).__name__} {str(facts)[:60]!r}")
    facts = list(facts)
    for fact in facts:
        if not isinstance(fact, str) or not fact.strip():
            raise BadArgument(f"question {question.get('id')!r}: each key fact must be non-empty text, not {fact!r}"[:200])
    return facts


def _shown(answer, cited) -> tuple[str, list]:
    """What a reader was shown, and what it cites: an ``Answer`` (its status says), or a text and its ids.

    An answer unavailable or refused showed nothing: it is marked as an abstention (« nothing said »),
    which is right only where no page answers — the rung did not answer, whatever the reason."""
    if isinstance(answer, Answer):
        if answer.status in (Status.UNAVAILABLE, Status.REFUSED):
            return "", []
        return answer.text, list(answer.cited)
    check_text(answer, "answer", allow_none=True)
    if isinstance(cited, (str, bytes)) or not isinstance(cited, Iterable):
        raise BadArgument(f"cited must be a list of the ids the answer cites, not {type(cited).__name__}")
    return answer or "", list(cited)


def _document(cited_id) -> str:
    """The document a cited id stands for: « page#3 » (a passage of it, ``rungs.passages``) is « page »; a
    name that holds « # » itself (« a#1.md ») keeps it — only a final « #<number> » names a passage."""
    doc, sep, position = str(cited_id).rpartition("#")
    return doc if sep and position.isdigit() else str(cited_id)


def _evidence_pages(question: Mapping) -> set:
    evidence = question.get("evidence") or []
    if isinstance(evidence, (str, bytes)) or not isinstance(evidence, Iterable) or isinstance(evidence, Mapping):
        raise BadArgument(f"question {question.get('id')!r}: evidence must be a list of {{'page', 'text'}}, "
                          f"not {type(evidence).__name__}")
    pages = set()
    for e in evidence:
        if not isinstance(e, Mapping) or not isinstance(e.get("page"), str):
            raise BadArgument(f"question {question.get('id')!r}: each evidence is {{'page': id, 'text': sentence}}, "
                              f"not {str(e)[:60]!r}")
        pages.add(e["page"])
    return pages


def score_answer(answer, question: dict, cited: list[str] = ()) -> dict:
    """One generated answer held against the question's reference: a rule a learner can read.

    ``answer``: an ``Answer`` (``rungs.grounding``: its text and cited ids; unavailable or refused, it
    showed nothing), or the text shown and the ids it cites (``cited``).

    - ``abstained``: the answer is « je ne sais pas », or nothing was shown;
    - ``answerable``: a page answers the question — a judgment above 0, unless the question's kind is
      « unanswerable » (a near miss may have pages that help and none that answers);
    - ``correct``: for a question no page answers, abstaining; otherwise, not
      abstaining and stating every key fact (``has_fact``);
    - ``facts``: each key fact → found or not (the reason an answer is wrong);
    - ``polarity``: for a reference that opens with « Oui » or « Non », what the answer opens with; an
      answer whose opening (its lead-in, or its first sentence) says the opposite is wrong, whatever its
      quotes say — a reader who trusts what is shown reads the « Oui » first;
    - ``contradicts``: the lead-in's figures that the reference contradicts (a figure with a unit the
      reference states, at a value it never gives: « 12 jours » where it says « 10 jours »): wrong too;
    - citations, for an answered question: ``citation_precision`` (cited pages
      that hold the evidence, or at least help, over cited pages) and
      ``citation_recall`` (evidence pages cited over evidence pages). A cited
      passage id « page#3 » counts as its page;
    - ``correct_and_cited``: right *and* citing at least one page judged to
      answer or help (for a question no page answers, the same as ``correct``):
      a right answer that cites only pages that say nothing of it was right by
      luck, or from a page it does not name.
    """
    if not isinstance(question, Mapping) or "id" not in question:
        raise BadArgument("question must be a question as load_questions returns it (a dict with an 'id')")
    text, cited = _shown(answer, cited)
    relevant = check_relevant(question.get("relevant") or {})
    facts_wanted = key_facts(question)
    evidence = _evidence_pages(question)
    abstained = not text.strip() or is_no_answer(text)
    answerable = question.get("kind") != "unanswerable" and any(g > 0 for g in relevant.values())
    words = answer_words(text)
    facts = {f: found_in(f, words) for f in facts_wanted} if answerable else {}
    # A « Oui » above a copied sentence that says « non » tells the reader « oui »: the opening must agree.
    wanted = polarity(question.get("answer")) if answerable else None
    said = polarity(opening(text)) if wanted and not abstained else None
    contradicts = _lead_contradicts(text, question) if answerable and not abstained else []
    agrees = not (said and wanted and said != wanted) and not contradicts
    correct = (not abstained and all(facts.values()) and bool(facts) and agrees) if answerable else abstained
    out = {"id": question["id"], "answerable": answerable, "abstained": abstained, "correct": correct,
           "facts": facts, "polarity": {"reference": wanted, "answer": said} if wanted else None,
           "contradicts": contradicts, "citation_precision": None, "citation_recall": None,
           "correct_and_cited": correct}
    pages = list(dict.fromkeys(_document(c) for c in cited))
    if answerable and not abstained and pages:
        useful = evidence | {p for p, g in relevant.items() if g > 0}
        out["citation_precision"] = sum(p in useful for p in pages) / len(pages)
        out["citation_recall"] = sum(p in pages for p in evidence) / len(evidence) if evidence else None
        out["correct_and_cited"] = correct and any(p in useful for p in pages)
    elif answerable and not abstained:
        out["citation_precision"], out["citation_recall"] = 0.0, 0.0 if evidence else None
        out["correct_and_cited"] = False
    return out


_POLAR = re.compile(r"\W*(oui|non|yes|no)\b")


def opening(text: str) -> str:
    """What an answer says first: its lead-in (the line above the copied sentences), or its first sentence."""
    text = (text or "").strip()
    if "\n" in text:
        return text.split("\n", 1)[0]
    first = sentences(text)
    return first[0] if first else text


def polarity(text: str | None) -> str | None:
    """« oui » or « non » when ``text`` opens with one (« Non : … », « Yes. »), else None."""
    m = _POLAR.match(fold(text or ""))
    return None if m is None else {"yes": "oui", "no": "non"}.get(m.group(1), m.group(1))


def _lead_contradicts(text: str, question: Mapping) -> list[str]:
    """The figures of a lead-in (the model's own words above the copied sentences) that the reference contradicts:
    a figure with a unit the reference also states, at a value the reference (or the question) never gives."""
    if "\n" not in text.strip():
        return []
    reference = str(question.get("answer") or "")
    held = figures.keys(reference) | figures.keys(str(question.get("question") or ""))
    units = {f.unit for f in figures.figures(reference) if f.unit}
    return [f.text for f in figures.figures(opening(text)) if f.unit in units and not figures.supported(f, held)]


MARK_KEYS = ("answerable", "abstained", "correct", "citation_precision", "citation_recall")


def answer_report(scored: list[dict]) -> dict:
    """The scores of many answers, summed up: accuracy, abstention where right and where wrong, citations."""
    if isinstance(scored, (str, bytes, Mapping)) or not isinstance(scored, Iterable):
        raise BadArgument(f"scored must be a list of what score_answer returns, not {type(scored).__name__}")
    scored = list(scored)
    for i, s in enumerate(scored):
        missing = [k for k in MARK_KEYS if not isinstance(s, Mapping) or k not in s]
        if missing:
            raise BadArgument(f"scored[{i}] is not what score_answer returns: it lacks {missing}")
    answerable = [s for s in scored if s["answerable"]]
    unanswerable = [s for s in scored if not s["answerable"]]
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    return {"answers": len(scored),
            "accuracy": mean([s["correct"] for s in scored]),
            "correct_and_cited": mean([s.get("correct_and_cited", s["correct"]) for s in scored]),
            "correct_answerable": mean([s["correct"] for s in answerable]),
            "abstained_when_answerable": mean([s["abstained"] for s in answerable]),
            "abstained_when_unanswerable": mean([s["abstained"] for s in unanswerable]),
            "citation_precision": mean([s["citation_precision"] for s in answerable if s["citation_precision"] is not None]),
            "citation_recall": mean([s["citation_recall"] for s in answerable if s["citation_recall"] is not None]),
            "answerable": len(answerable), "unanswerable": len(unanswerable)}
