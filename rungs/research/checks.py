"""What a sentence of the report must pass before a reader sees it, and the quote behind each citation.

What it is for: N5's report streams, and a streamed sentence cannot be taken
back. So the checks N3 runs on a whole answer run here on each sentence, once
it is complete (``rungs.research.report`` decides when), before it is shown:

- **no scaffolding** — the sentence holds no mark of the prompt's fences
  (« <<< », « >>> », the request's code): a model that copies a source block
  whole (« [1] >>>SOURCE 2 b89d… ») is not answering, and its frame never
  reaches the reader;
- **no forgery** — no citation of a source never gathered was removed from it
  (« … illimités [7] »: the claim is withheld with its citation, not shown bare);
- **cited** — it cites a gathered source (the prompt asks for a citation on
  every claim; a sentence with none of its own is covered by the last shown
  sentence of its paragraph that has one, the way the model writes
  « [1] Un paragraphe entier. »);
- **figures held** — every figure it says (``rungs.grounding.figures``) is held
  by a source it cites or by the question.

A sentence that fails is withheld, and the reason becomes a note. Then, for
each citation of a shown sentence, **a quote**: the cited source's sentence
that shares the most words with it, copied from the source by code (so found in
it by construction: ``rungs.grounding.claims``) — the reader sees which words
of the page a claim rests on; code chose them, the model did not.

Cost: linear in the sentence and the sources it cites.
"""

from __future__ import annotations

import hashlib

from ..core.errors import BadArgument
from ..core.text import tokenise
from ..grounding import claims, figures
from ..grounding.answer import Quote
from ..grounding.citations import cited_numbers, without_citations


def fence_code(request: str, nbytes: int = 6) -> str:
    """The code of one request's fences: the first ``nbytes`` bytes of the SHA-256 of the request — the prompt
    with its code left out, every source inside it — in hexadecimal.

    No page can know it: to carry the code, a page would have to hold the hash of a text that holds the page
    itself. And it is deterministic: the same request gets the same code, so a run is repeatable and a
    replayed run (``RUNGS_REPLAY``) sends the very prompt it recorded.
    """
    return hashlib.sha256(request.encode("utf-8")).hexdigest()[:2 * nbytes]


def fences(nonce: str) -> tuple[str, ...]:
    """The marks of the prompt's fences that no shown sentence may hold (``Answer.fences``)."""
    return ("<<<", ">>>", nonce)


def sentence_faults(sentence: str, cites: list[int], sources: dict[int, str], question: str,
                    marks: tuple[str, ...], forged: bool = False) -> list[str]:
    """Why ``sentence`` may not be shown, in words; [] if it may.

    ``cites``: the source numbers it rests on (its own citations, or its paragraph's); ``sources``:
    number → the text sent for every gathered source; ``marks``: the fences' marks (``fences``);
    ``forged``: a citation of a source never gathered was removed from it.
    """
    echoed = [m for m in marks if m and m in sentence]
    if echoed:
        return [f"it echoes the prompt's fence ({', '.join(f'« {m} »' for m in echoed)}): a source's frame "
                "is not an answer"]
    if forged:  # what it rests on was never gathered: its other citations cannot vouch for it
        return ["it cited a source that was never gathered"]
    if not cites:
        return ["it cites none of the gathered sources"]
    held = [sources[n] for n in cites if n in sources] + [question]
    missing = figures.unsupported(without_citations(sentence), held)
    if missing:
        return [f"the figure « {f} » is in no source it cites" for f in missing]
    return []


def _words(text: str) -> set[str]:
    return set(tokenise(text, stopwords=True))


def quotes(sentence: str, numbered: dict[int, str], texts: dict[str, str]) -> list[Quote]:
    """One quote per source ``sentence`` cites: the source's sentence with the most words in common.

    ``numbered``: source number → page id; ``texts``: page id → the text that was sent. A page's title
    names it and answers nothing: a quote comes from its body (its title only if it has no body).
    """
    claim, said = without_citations(sentence), _words(without_citations(sentence))
    out = []
    for n in cited_numbers(sentence):
        if n not in numbered:
            continue
        text = texts.get(numbered[n]) if isinstance(texts, dict) else None
        if text is None:  # a numbered page whose text was not handed in: named, not a bare KeyError
            raise BadArgument(f"texts has no text for page {numbered[n]!r} (source [{n}]): pass the text sent "
                              "for every numbered page")
        candidates = claims.sentences(claims.heading_and_body(text)[1]) or claims.sentences(text) or [text]
        # The most words in common; the first such sentence on a tie (the page's order).
        best = max(candidates, key=lambda s: (len(said & _words(s)), -candidates.index(s)))
        out.append(Quote(numbered[n], best, claim))
    return out
