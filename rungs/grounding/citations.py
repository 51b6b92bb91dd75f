"""The one citation syntax: « [2] », « [1, 3] », « [1; 3] » — numbers of sources, in square brackets.

What it is for: N5's report cites its fenced, numbered sources this way; the
streaming filter (``rungs.research.ground``) keeps a citation only if every
number in it was gathered, the quotes and the figure check read which sentence
cites what, and the no-answer rule looks past a citation glued to « je ne sais
pas ». Three readers of one syntax, so it is written once, here.

Cost: one regular expression over the text.
"""

from __future__ import annotations

import re

#: A citation: an opening bracket, numbers separated by commas, semicolons or spaces, a closing bracket.
CITATION = re.compile(r"\[([\d,; ]+)\]")
#: All a citation may hold between its brackets.
CITATION_BODY = re.compile(r"[\d\s,;]*")


def numbers(body: str) -> list[str]:
    """The numbers written inside one citation's brackets, as text (« 1, 3 » → ['1', '3'])."""
    return re.findall(r"\d+", body)


def cited_numbers(text: str) -> list[int]:
    """Every source number cited in ``text``, in order, each once (a number of more than 9 digits is none)."""
    found = [int(n) for m in CITATION.finditer(text) for n in numbers(m.group(1)) if len(n) <= 9]
    return list(dict.fromkeys(found))


def without_citations(text: str) -> str:
    """The text with its citations taken out, and no space left before the punctuation that followed them."""
    return re.sub(r"\s+(?=[,.;:!?])", "", CITATION.sub("", text)).strip()
