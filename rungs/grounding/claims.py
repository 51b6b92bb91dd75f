"""An answer's claims checked against what it cites: quotes found word for word, figures held.

What it is for: N3's answer carries, for each passage it cites, the words it
rests on, copied verbatim; N5's citations carry them too. Code checks each
quote against its passage after normalising what typing changes and reading
does not — whitespace, case, quotation marks and apostrophes — and nothing
looser: a quote with one word changed, an ellipsis, or two sentences glued
from different places is not found. ``sentences`` cuts a passage into the
sentences N3's pointing mode numbers (and that a quote most often is).
``faults`` is the whole check of one answer: its quotes found, each cited
passage quoted (when quotes are required), and every figure of the answer held
by a quote, a cited passage or the question (``rungs.core.figures``).

What a found quote proves: those words are in that passage. What it cannot:
that they answer the question, or that the answer follows from them — a true
quote under a wrong conclusion passes (notebook 03, section 4).

Cost: linear in the passage's length.
"""

from __future__ import annotations

import re

from ..core import sentences as _sentences
from ..core.display import cut_text
from ..core.errors import check_text
from ..core.text import nfc
from . import figures as _figures
from .answer import FigureCheck
from .citations import without_citations

#: Every way a text writes a quotation mark or an apostrophe, and the one each becomes.
_MARKS = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "′": "'", "`": "'", "´": "'", "«": '"', "»": '"',
                        "“": '"', "”": '"', "„": '"', "‹": '"', "›": '"'})
#: The longest quote worth checking: a quote is a sentence or two, not a page.
MAX_QUOTE_CHARS = 1500
#: The fewest words a required quote holds: « e » or « de la » is in almost any passage and shows nothing.
MIN_QUOTE_WORDS = 3


def normalise(text: str) -> str:
    """A text as a quote is compared: composed, lower case, one kind of quotation mark and apostrophe, one space."""
    text = nfc(check_text(text, "text")).casefold().translate(_MARKS)
    # French sets « guillemets » off with spaces, English "quotes" without: no space beside a quotation mark.
    return re.sub(r'\s*"\s*', '"', re.sub(r"\s+", " ", text)).strip()


def quote_body(quote: str) -> str:
    """The quote itself: surrounding quotation marks and spaces are how it was quoted, not what it says."""
    return normalise(quote).strip(" \"'")


def found(quote: str, passage: str) -> bool:
    """Is ``quote`` in ``passage``, word for word, after ``normalise``? An empty quote is in no passage."""
    body = quote_body(quote)
    # A quote must hold a word: « . » or « " " » is in every passage and says nothing.
    return bool(re.search(r"\w", body)) and body in normalise(passage)


def sentences(text: str) -> list[str]:
    """The sentences of a passage: the collection's one splitter (``rungs.core.sentences``)."""
    return _sentences.sentences(text)


def heading_and_body(text: str) -> tuple[str | None, str]:
    """A passage's heading (its first line, when a blank line follows it and it ends no sentence), and the rest.

    A page is sent as « title, blank line, body » (``rungs.core.documents.page_text``): the title names
    the passage and answers nothing, so the pointing mode shows it beside the numbers, not as a sentence.
    """
    head, sep, rest = check_text(text, "text").partition("\n\n")
    if sep and "\n" not in head.strip() and len(head) <= 200 and not head.rstrip().endswith((".", "!", "?", ":")):
        return head.strip() or None, rest
    return None, text


def numbered(passages: list[dict]) -> list[dict]:
    """Every sentence of the passages, numbered from 1 across them: ``{"n", "source", "text"}`` in order.

    ``passages``: ``{"id", "text"}`` as N3 sends them. The numbers are what the pointing mode's
    schema allows, and the only thing the model writes.
    """
    out = []
    for p in passages:
        for sentence in sentences(heading_and_body(p["text"])[1]):
            out.append({"n": len(out) + 1, "source": str(p["id"]), "text": sentence})
    return out


def faults(answer: dict, sent: list[dict], question: str, *, quotes_required: bool,
           check_figures: bool = True) -> list[dict]:
    """What stops ``answer`` from being shown, each ``{"kind", "what", "source", "reason"}``; [] if nothing does.

    ``answer``: ``{"answer", "sources", "quotes"}`` whose sources were all sent (a no-answer has none);
    ``sent``: the passages sent, ``{"id", "text"}``. ``quote``: a quote not in the passage it cites, or
    a cited passage without a quote when ``quotes_required``; ``figure``: a figure of the answer that no
    quote, cited passage or the question holds.
    """
    if not answer["sources"] and not answer["quotes"]:
        return []  # « je ne sais pas »: nothing is claimed
    text = {str(p["id"]): p["text"] for p in sent}
    out = [{"kind": "quote", "what": q["text"], "source": q["source"],
            "reason": f"the quote « {cut_text(q['text'], 80)} » is not in passage « {q['source']} »"}
           for q in answer["quotes"] if not found(q["text"], text[q["source"]])]
    if quotes_required:
        out += [{"kind": "quote", "what": q["text"], "source": q["source"], "short": True,
                 "reason": f"the quote « {cut_text(q['text'], 80)} » from passage « {q['source']} » is too short to "
                           f"show what the answer rests on (a quote is at least {MIN_QUOTE_WORDS} words)"}
                for q in answer["quotes"] if found(q["text"], text[q["source"]])
                and len(re.findall(r"\w+", quote_body(q["text"]))) < MIN_QUOTE_WORDS]
        quoted = {q["source"] for q in answer["quotes"]}
        out += [{"kind": "quote", "what": "", "source": s, "reason": f"passage « {s} » is cited without a quote"}
                for s in answer["sources"] if s not in quoted]
    if check_figures:
        held = [text[s] for s in answer["sources"]] + [q["text"] for q in answer["quotes"]] + [question]
        out += [{"kind": "figure", "what": f, "source": None, "reason": f"the figure « {f} » is in no cited passage"}
                for f in _figures.unsupported(answer["answer"], held)]
    return out


def figure_checks(text: str, cited: dict[str, str], quotes=(), question: str = "") -> tuple[FigureCheck, ...]:
    """Each figure of ``text`` (once) and what holds it: the cited passages (id → text) whose text holds it,
    else the quotes' sources, else ``("question",)``; empty when nothing does (``FigureCheck``)."""
    held = {c: _figures.keys(t) for c, t in cited.items()}
    quoted = [(q["source"], q["text"]) if isinstance(q, dict) else (q.source, q.text) for q in quotes]
    asked = _figures.keys(question or "")
    out = {}
    for f in _figures.figures(without_citations(text)):
        if f.text in out:
            continue
        by = [c for c, keys in held.items() if _figures.supported(f, keys)]
        by += [s for s, t in quoted if s not in by and _figures.supported(f, _figures.keys(t))]
        out[f.text] = FigureCheck(f.text, tuple(by) or (("question",) if _figures.supported(f, asked) else ()))
    return tuple(out.values())
