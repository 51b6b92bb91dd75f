"""Sentences: the one splitter of the collection, for snippets, passages and answers alike.

What it is for: a hit's snippet is its best sentence (``rungs.core.display``),
a passage is cut at sentence ends (``rungs.passages``), the pointing mode numbers
the sentences it sends and a quote is most often one (``rungs.grounding``). Three
splitters would disagree on « art. 5 » or on a PDF's line break — they did — so
there is one, here, on the ground floor, where all of them can reach it.

The rule, in order:

- a blank line ends a paragraph, and so a sentence (a heading, a list's end);
- inside a paragraph, a line break after a line that ends with punctuation
  (« . ! ? … : ; ») or before a list item (« - », « • », « 1. ») ends a line,
  and so does one after a short line (under half the paragraph's longest)
  when the next line does not open in lower case: a heading, a line of code,
  a page number, a table's row; any other line break is the one a PDF puts
  inside a sentence, read as a space;
- inside a line, a sentence ends at « . », « ! », « ? » or « … » (and the
  closing quotation mark or bracket after it) followed by a space and a
  capital, a digit or an opening mark — not after an abbreviation (« art. 5 »,
  « M. Dupont », « p. 12 », « cf. », « av. », « Dr. », « v. 3.1 »), an
  initial (« J. Dupont ») or a list's or heading's number (« 4. », « 2.2. »);
- a piece with no letter or digit is no sentence.

``spans`` gives each sentence as ``(start, end)`` offsets into the text (a
snippet marks words at their place); ``sentences`` gives the sentences' text,
each line break inside one read as a space. Chosen by measurement against
pysbd, sentencex and spaCy on sentences cut by hand (``benchmarks/bench_sentences.py``,
``benchmarks/README.md``).

Cost: one pass of two regular expressions over the text; linear in its length.
"""

from __future__ import annotations

import re

from .errors import check_text

# An abbreviation's full stop ends no sentence: « art. 5 », « M. Dupont », « p. 12 », « n. », « L. 1234 ».
_ABBREVIATIONS = re.compile(r"(?:\b(?:art|m|mme|p|pp|cf|ex|n|no|l|r|st|ste|env|min|max|vol|chap|fig|tel|av|bd|dr|v)"
                            r"|\.\.)\.$", re.IGNORECASE)
# Nor does an initial's: « J. Dupont », « J.-P. Martin ».
_INITIAL = re.compile(r"(?<![\w.])[A-ZÀ-ÖØ-Þ]\.$")
_END = re.compile(r"(?<=[.!?…])((?:\s?[»”\")\]])*)\s+(?=[«\"(\[A-ZÀ-ÖØ-Þ0-9])")
# A list's or a heading's number (« 4. », « 2.2. ») is not a sentence: the item goes on after it.
_NUMBER = re.compile(r"\s*\d+(?:\.\d+)*\.")
# A line shorter than this share of its paragraph's longest is a heading's, a code line's or a paragraph's last.
SHORT_LINE = 0.5
_PARAGRAPH = re.compile(r"\n[^\S\n]*\n\s*")
_LINE_ENDS = re.compile(r"[.!?…:;]\s*$")
_ITEM = re.compile(r"\s*(?:[-•*–]|\d+[.)])\s")
_WORD = re.compile(r"\w")


def _lines(text: str, start: int, end: int):
    """The lines of one paragraph as ``(start, end)`` offsets, a PDF's line break inside a sentence joined."""
    joined: list[list[int]] = []
    at, raws = start, text[start:end].split("\n")
    longest, last = max(len(raw.strip()) for raw in raws), 0
    for raw in raws:
        a, b = at, at + len(raw)
        at = b + 1
        stripped = raw.strip()
        if not stripped:
            continue
        a += len(raw) - len(raw.lstrip())
        b -= len(raw) - len(raw.rstrip())
        # After a short line, a line that does not open in lower case starts anew (a heading, a line of code).
        short = last < SHORT_LINE * longest and not stripped[0].islower()
        if joined and not _LINE_ENDS.search(text[joined[-1][0]:joined[-1][1]]) and not _ITEM.match(raw) and not short:
            joined[-1][1] = b  # the line goes on: one sentence across the break
        else:
            joined.append([a, b])
        last = len(stripped)
    return joined


def spans(text: str) -> list[tuple[int, int]]:
    """Every sentence of ``text`` as ``(start, end)`` offsets, in order (see the module's rule)."""
    text = check_text(text, "text")
    out, start = [], 0
    for boundary in [*_PARAGRAPH.finditer(text), None]:
        end = boundary.start() if boundary else len(text)
        for a, b in _lines(text, start, end):
            cut = a
            for match in _END.finditer(text, a, b):
                if _ABBREVIATIONS.search(text, cut, match.start()) or _INITIAL.search(text, cut, match.start()) \
                        or _NUMBER.fullmatch(text, cut, match.start()):
                    continue
                out.append((cut, match.end(1)))  # a closing quotation mark or bracket ends the sentence too
                cut = match.end()
            out.append((cut, b))
        start = boundary.end() if boundary else end
    return [(a, b) for a, b in out if _WORD.search(text, a, b)]


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order, each as the text writes it (a line break inside one is a space)."""
    return [re.sub(r"\s*\n\s*", " ", text[a:b]).strip() for a, b in spans(text)]
