"""The report checked after it streamed: a quote behind every citation, and every figure held by a cited source.

What it is for: N5's report cites numbered sources as it streams (``ground``
checks that each number was gathered). Two more checks, N3's, run once the
report is whole:

- **quotes** — for each citation, the sentence of the cited source that shares
  the most words with the sentence of the report that cites it, copied from the
  source (so found in it by construction: ``rungs.core.claims``). The reader sees
  which words of the page a claim rests on; code chose them, the model did not.
- **figures** — every figure of the report (``rungs.core.figures``) must be in a
  source it cites or in the question. A streamed report has already been shown,
  so it cannot be refused: a figure that fails is **marked** — a line
  « unsupported figure: … » after the report, in ``notes``, and in
  ``unsupported_figures`` — never left unmarked.

Cost: linear in the report and the cited sources.
"""

from __future__ import annotations

import re

from ..core import claims, figures
from ..core.text import tokenise

_CITATION = re.compile(r"\[([\d,; ]+)\]")


def _words(text: str) -> set[str]:
    return set(tokenise(text, stopwords=True))


def quotes(report: str, numbered: dict[int, str], texts: dict[str, str]) -> list[dict]:
    """One quote per (report sentence, cited number): ``{"n", "source", "text", "claim"}``, in report order.

    ``numbered``: source number → page id; ``texts``: page id → the text that was sent.
    """
    out, seen = [], set()
    for claim in claims.sentences(report):
        cited = [int(n) for group in _CITATION.findall(claim) for n in re.findall(r"\d+", group)]
        said = _words(_CITATION.sub(" ", claim))
        for n in dict.fromkeys(cited):
            if n not in numbered or (claim, n) in seen:
                continue
            seen.add((claim, n))
            candidates = claims.sentences(texts[numbered[n]]) or [texts[numbered[n]]]
            # The most words in common; the first such sentence on a tie (the page's order).
            best = max(candidates, key=lambda s: (len(said & _words(s)), -candidates.index(s)))
            out.append({"n": n, "source": numbered[n], "text": best,
                        "claim": re.sub(r"\s+(?=[,.;:!?])", "", _CITATION.sub("", claim)).strip()})
    return out


def unsupported_figures(report: str, cited: list[str], texts: dict[str, str], question: str) -> list[str]:
    """The figures of the report that no cited source (nor the question) holds, as read (``figures.figures``)."""
    return figures.unsupported(_CITATION.sub(" ", report), [texts[p] for p in cited] + [question])
