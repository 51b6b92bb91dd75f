"""What a learner should notice in one answer: short statements computed from the answer, never written by hand.

What it is for: a notebook's prose cannot know what tonight's run will say, so
« if it answered…, if it abstained… » is all it can write. ``notice(answer,
question)`` reads the answer itself and says what there is to see in it:

- a quote that is a question (it ends with « ? »): another entry of a page of
  questions and answers, copied as if it answered;
- a citation whose page holds neither the evidence nor any help for the
  question (the mark's own citation rule, ``answers.score_answer``, applied to
  that one citation), and a claim whose words are not on the page it cites;
- a key fact missing from what is shown though a passage that was sent holds it
  (the reading lost it), or held by no passage sent (the retrieval lost it);
  and « je ne sais pas » where the passages sent hold every key fact;
- a report cut by its token budget (N5's synthesis budget,
  ``research.STAGE_TOKENS['synthesis']``), a sentence withheld, a lead-in dropped;
- an answer shown to a question no page answers.

It reuses the collection's one sentence splitter (``rungs.core.sentences``),
figure reader (``rungs.grounding.figures``) and mark (``rungs.lab.answers``):
a fact is « held » exactly when the mark would find it. Model-free.

Cost: the mark once, and once per citation; each sent passage read once per
missing key fact (a few passages, a few facts). Taught in notebooks 03, 05 and
09, in the cell after each live answer.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import BadArgument
from ..core.sentences import sentences
from ..grounding import Answer, figures
from . import answers

#: A claim shares fewer than this share of its longer words with the page it cites: its words are not there.
CLAIM_WORDS_ON_PAGE = 0.5
#: Quotes and claims are shown cut to this many characters.
SHOWN = 70


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "…"


def _questions_quoted(answer: Answer) -> list[str]:
    # A sentence that asks is not an answer: on a page of questions and answers, it is the next entry's question.
    return [f"quote [{i}] « {_short(q.text)} » is a question, not an answer: a sentence that asks, copied from "
            f"« {q.source} » as if it answered" for i, q in enumerate(answer.quotes, 1)
            if sentences(q.text) and sentences(q.text)[-1].rstrip().endswith("?")]


def _citations(answer: Answer, question: Mapping, answerable: bool) -> list[str]:
    out = []
    for i, q in enumerate(answer.quotes, 1):
        said = q.claim or q.text
        if answerable and said.strip():  # the mark's citation precision, on this one citation alone
            mark = answers.score_answer(said, question, cited=[q.source])
            if mark["citation_precision"] == 0:
                out.append(f"citation [{i}] is « {q.source} », a page that neither answers nor helps with this "
                           "question (its relevance judgment)")
        page = answer.sent.get(q.source)
        if q.claim and isinstance(page, str):
            out += _claim_on_page(i, q.claim, q.source, page)
    return out


def _claim_on_page(i: int, claim: str, source: str, page: str) -> list[str]:
    # The claim's longer words (the mark's reading of words), and its figures (the figure check's reading).
    words = {w for w in answers.answer_words(claim) if len(w) > 3}
    held = set(answers.answer_words(page))
    out = []
    if words and len(words & held) / len(words) < CLAIM_WORDS_ON_PAGE:
        out.append(f"claim [{i}] « {_short(claim)} »: {len(words & held)} of its {len(words)} longer words are on "
                   f"« {source} », the page it cites")
    missing = sorted(figures.keys(claim) - figures.keys(page))
    if missing:
        out.append(f"claim [{i}] states {', '.join(f'« {m} »' for m in missing)}, not on « {source} »")
    return out


def _holders(fact: str, answer: Answer) -> list[str]:
    # Which passages sent hold the fact, read as the mark reads an answer (a fact is held when the mark would find it).
    return [pid for pid, text in answer.sent.items()
            if isinstance(text, str) and answers.found_in(fact, answers.answer_words(text))]


def _facts(answer: Answer, mark: dict) -> list[str]:
    if not mark["answerable"]:
        return [] if mark["abstained"] else ["no page answers this question, and an answer was shown anyway"]
    held = {fact: _holders(fact, answer) for fact in mark["facts"]}
    if mark["abstained"]:
        if held and all(held.values()):
            return ["« je ne sais pas », though the passages sent hold every key fact: " + "; ".join(
                f"« {f} » in « {p[0]} »" for f, p in held.items())]
        return [f"« je ne sais pas »: the key fact « {f} » is in no passage sent" for f, p in held.items() if not p]
    out = []
    for fact, found in mark["facts"].items():
        if found:
            continue
        out.append(f"the key fact « {fact} » is in « {held[fact][0]} », sent, but not in what is shown"
                   if held[fact] else f"the key fact « {fact} » is in no passage sent: retrieval lost it")
    return out


def _notes(answer: Answer) -> list[str]:
    withheld = [w for w in answer.trail.withheld if isinstance(w, Mapping)]
    cut = [w for w in withheld if str(w.get("reason", "")).startswith("unfinished")]
    out = [f"the report was cut by its token budget mid-sentence: « {_short(w.get('text', ''))} » was never shown"
           for w in cut]
    if not cut:  # a cut said only in the notes (no unfinished sentence was recorded)
        out += [f"{_short(n)}: what it had not reached is not shown" for n in answer.notes
                if "report was cut by its token budget" in n and not n.startswith("sentence withheld")]
    out += [f"a sentence was withheld, never shown: « {_short(w.get('text', ''))} » ({_short(w.get('reason', ''))})"
            for w in withheld if w not in cut]
    out += [f"the model's own words were dropped ({_short(n)})" for n in answer.notes if n.startswith("lead-in dropped")]
    return out


def notice(answer: Answer, question: Mapping) -> list[str]:
    """What there is to notice in ``answer`` to ``question`` (a judged question, as ``load_questions`` gives
    it), as short English statements, in the order a reader meets them: the quotes, the citations, the
    key facts, the notes. An empty list: nothing beyond what the mark says."""
    if not isinstance(answer, Answer):
        raise BadArgument(f"answer must be an Answer (what rag.answer or research.run returns), "
                          f"not {type(answer).__name__}")
    odd = [q for q in answer.quotes if not all(isinstance(v, str) for v in (q.source, q.text, q.claim))]
    if odd:  # a Quote is not checked where it is built: its parts are read here as text
        raise BadArgument(f"answer: each quote's source, text and claim must be text, not {odd[0]!r:.80}")
    mark = answers.score_answer(answer, question)  # refuses a question of the wrong shape, by name
    return (_questions_quoted(answer) + _citations(answer, question, mark["answerable"])
            + _facts(answer, mark) + _notes(answer))
