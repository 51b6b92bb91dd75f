"""N3's pointing modes: the passages cut into numbered sentences, the model's choice read, a lead-in anchored.

What it is for: an answer copied by code from the sentences sent, so every sentence shown can
be checked (N3 measures that it is not more often right than a written one). ``sentences_for``
numbers the sentences sent (at most ``SENTENCES_SENT``, those that match the question
best); the model answers with numbers (``decode_pointing``), and, in « pointing-lead »,
a few words first, whose figures must be in a sentence shown with them (``anchor``); ``borrowed``
says whether a lead says more than the sentence it rests on (benchmarks/README.md, « A lead that cannot borrow »).
``rungs.rag.point`` turns the numbers into the answer, copied.

Cost: cutting and ranking a few dozen sentences (BM25 and the vector leg): milliseconds,
and the encoder's first load.
"""

from __future__ import annotations

import re

from ..core.documents import passage_text
from ..core.errors import short_repr
from ..core.text import tokenise
from ..grounding import claims as _claims
from ..grounding import figures as _figures
from ..grounding.replies import UnusableReply
from .prompts import attribute, content
from .replies import PointingReply

SENTENCES_SENT = 12  # the pointing mode sends at most this many sentences (sentences_for)
#: The lead-in of « pointing-lead »: a few words, never a paragraph (the sentences are the answer); past
#: it, cut after a whole word. The schema allows a little more, so the model is never cut mid-word.
MAX_LEAD_CHARS = 120
MAX_SENTENCES = 3  # the pointing mode's answer: at most three sentences, copied


def sentences_for(question: str, passages: list[dict], limit: int | None = SENTENCES_SENT) -> list[dict]:
    """The sentences the numbered readers read: ``{"n", "source", "text", "rank"}``, numbered 1… in the passages' order.

    Every sentence of the passages; past ``limit``, the ``limit`` that match the question best — BM25
    (stop words out, stemmed) and the vector leg fused by RRF, over sentences — so the prompt is shorter
    and the model reads only what may answer. ``rank`` is each sentence's place in that order (1: the
    best), what the « copy » reader copies by; without a question, the passages' order. (Chosen on the
    deciding half of the judged questions, without a model: the smallest limit that kept every key
    fact the full passages held.)
    """
    every = _claims.numbered([{"id": p["id"], "text": passage_text(p)} for p in passages])
    rank = {s["n"]: i for i, s in enumerate(every, 1)}
    if len(every) > 1 and question.strip():
        from .. import hybrid  # N2, below this rung; here, so numbering a question's sentences is what loads the encoder

        docs = [{"id": str(s["n"]), "body": s["text"]} for s in every]
        # The collection's one hybrid recipe, at its textbook setting (RRF, k = 60, the legs weighed alike).
        fused = hybrid.build(docs, hybrid.TEXTBOOK, fields=("body",), stem=True)
        order = [int(h.id) for h in fused.search(question, limit=len(every))]
        order += [s["n"] for s in every if s["n"] not in set(order)]  # a sentence no leg found comes last
        rank = {n: i for i, n in enumerate(order, 1)}
    if limit is not None and len(every) > limit:
        every = [s for s in every if rank[s["n"]] <= limit]
    ranks = {s["n"]: r for r, s in enumerate(sorted(every, key=lambda s: rank[s["n"]]), 1)}
    return [{**s, "n": i, "rank": ranks[s["n"]]} for i, s in enumerate(every, 1)]


def numbered_blocks(passages: list[dict], sentences: list[dict]) -> str:
    """Each passage fenced by its id and titled by its heading, one numbered sentence a line."""
    blocks = []
    for p in passages:
        head = _claims.heading_and_body(passage_text(p))[0]
        title = f' titre="{attribute(head)}"' if head else ""
        lines = [f"[{s['n']}] {content(s['text'])}" for s in sentences if s["source"] == str(p["id"])]
        blocks.append(f'<extrait id="{attribute(p["id"])}"{title}>\n' + "\n".join(lines) + "\n</extrait>")
    return "\n\n".join(blocks)


#: What a pointing reply writes, instead of numbers, when no sentence answers: an explicit choice of its schema.
NONE = "aucune"


def decode_pointing(reply: dict, lead: bool = False) -> PointingReply:
    """``{"phrases": [numbers] | "aucune"}`` (and, with ``lead``, ``"reponse"``) read into a ``PointingReply``;
    anything else is an ``UnusableReply``. « aucune » — no sentence answers — is read as no numbers: the no-answer."""
    numbers = reply.get("phrases")
    said = reply.get("reponse") if lead else None
    if lead and not isinstance(said, str):
        raise UnusableReply('"reponse" missing or not a string')
    if said is not None:
        try:
            said.encode("utf-8")
        except UnicodeEncodeError:  # half a character is not text to show
            raise UnusableReply('"reponse" holds a lone surrogate, which is not text') from None
    if isinstance(numbers, str) and numbers.strip().lower() == NONE:
        numbers = []
    if not isinstance(numbers, list):
        raise UnusableReply(f'"phrases" missing, or neither a list of numbers nor « {NONE} »')
    out = []
    for n in numbers:
        # « 3 » and 3 are the same sentence; a boolean or « 3a » is none.
        if isinstance(n, bool) or not (isinstance(n, int) or (isinstance(n, str) and n.strip().isdecimal()
                                                               and len(n.strip()) <= 9)):
            raise UnusableReply(f"{short_repr(n)} is not a sentence number")
        out.append(int(n))
    return PointingReply(tuple(dict.fromkeys(out)), cut_lead(said) if lead else "")


def cut_lead(said: str) -> str:
    """A lead-in as shown: at most ``MAX_LEAD_CHARS``, cut after a whole word (« … ») — never « appu »."""
    said = " ".join(said.split())
    if len(said) <= MAX_LEAD_CHARS:
        return said
    cut = said[:MAX_LEAD_CHARS + 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return (cut or said[:MAX_LEAD_CHARS]) + " …"


def restates(lead: str, question: str) -> bool:
    """Does the lead-in only say the question again (« Les caractères un nom de paquet peut-il contenir ? »)?

    Its words (stop words out, stemmed) are all the question's, it holds no figure the question does
    not, and it is not a yes or a no: it answers nothing, whatever sentences follow it.
    """
    words = set(tokenise(lead, stopwords=True, stem=True))
    if not words or _claims.normalise(lead).strip(" .!") in ("oui", "non"):
        return False
    asked = set(tokenise(question, stopwords=True, stem=True))
    return words <= asked and not _figures.unsupported(lead, [question])


def anchor(lead: str, chosen: list[int], numbered: list[dict]) -> list[int]:
    """The sentences behind a lead-in's figures: the model's, if one of them holds every figure of the lead;
    else the sent sentence that does and shares the most words with the lead (the model pointed beside it);
    else the model's (and the figure check then drops the lead)."""
    said = _figures.figures(lead) if lead else []
    if not said:
        return chosen
    holds = lambda s: not _figures.unsupported(lead, [s["text"]])
    by_n = {s["n"]: s for s in numbered}
    if any(holds(by_n[n]) for n in chosen):
        return chosen
    words = set(_claims.normalise(lead).split())
    found = [s for s in numbered if holds(s)]
    best = max(found, key=lambda s: (len(words & set(_claims.normalise(s["text"]).split())), -s["n"]), default=None)
    return [best["n"]] if best else chosen


#: Words that make a French sentence say « no » (« ne … pas », « aucun », « interdit »): what a lead's « Non » rests on.
_NEGATIONS = frozenset({"ne", "n", "pas", "jamais", "aucun", "aucune", "nul", "nulle", "ni", "non", "interdit",
                        "interdite", "interdits", "interdites"})


def borrowed(lead: str, anchored: list[str]) -> str:
    """Why a lead-in says more than the sentences it rests on (``anchored``, their texts), or "" when it does not:
    a figure none of them holds (« deux mois » held only by another sentence shown), or a « Non » over sentences
    that say no « ne … pas », « aucun »… (a « Oui » over sentences that do)."""
    if not lead:
        return ""
    missing = _figures.unsupported(lead, anchored)
    if missing:
        return f"its figure(s) {', '.join(map(str, missing))} are not in the sentence it rests on"
    said = re.findall(r"\w+", _claims.normalise(lead))[:1]
    negated = bool(set(re.findall(r"\w+", _claims.normalise(" ".join(anchored)))) & _NEGATIONS)
    if said in (["oui"], ["non"]) and (said == ["non"]) != negated:
        return f"its « {said[0]} » is not what the sentence it rests on says"
    return ""
