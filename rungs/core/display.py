"""The one way a ranking is shown: fixed-width text a checked cell can compare, a bump chart, live text.

Every rung returns rankings as lists of ``rungs.core.retrieval.Hit`` (``id``,
``score``, ``title``, and ``parts`` that explain the score); this module is
where they become something a reader looks at: ``ranking_table`` and ``show``
(one ranking), ``side_by_side`` (two, with how each page moved), ``parts_table``
(why one hit scored), ``best_sentence`` (the sentence of a passage that
matches a query, its words marked: every hit's snippet), ``hits_table`` (a
folder's hits: file, page, section, snippet, why), ``safe_text`` (a document's or a model's words as a
terminal may print them),
``bump_chart`` (ranks across a knob's values), and the two kinds of output that
grow while a cell runs (``LiveText``, ``progress``: at home in ``rungs.core.live``,
imported here too). Scores are printed to 3
decimals so that a checked cell compares stable text, not the last bits of a
float.

Cost: nothing worth measuring.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from . import sentences
from .errors import BadArgument, short_repr, check_int, check_query, check_text
from .retrieval import check_hit_list, check_scored, check_scored_ranking
from .text import FRENCH_STOPWORDS, WORD, tokenise
from .live import LiveText, progress  # noqa: F401 - their home is rungs.core.live; notebooks import them here


def cut_text(text: str, width: int) -> str:
    """A text on one line, cut to ``width`` characters with « … »: what a table cell or a message quotes."""
    width = check_int(width, "width", low=1, high=100_000)
    text = " ".join(str(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


#: Every C0 and C1 control character but the tab and the newline: what a terminal obeys instead of showing.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: The bidirectional controls (they reorder what follows: « \u202e » shows « fdp.exe » as « exe.pdf ») and the
#: halves of UTF-16 pairs (a file name's bytes that are not UTF-8): a terminal must see neither.
_UNSHOWN = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def safe_text(text) -> str:
    """Text from a document or a model as a terminal can be shown it: every control character but the newline
    and the tab written as its escape (« \\x1b »), so that a file holding « \\x1b[2J » cannot clear the screen;
    the bidirectional controls and lone surrogates too (« \\u202e », « \\udce9 »), so none reorders a line
    or stops a UTF-8 terminal."""
    if not isinstance(text, str):
        raise BadArgument(f"text must be a string to show, not {type(text).__name__} {short_repr(text)}")
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return _UNSHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class Table(str):
    """Text that shows as itself (no quotes) when Jupyter or a widget displays it."""

    def __repr__(self) -> str:
        return str(self)


def ranking_table(ranking: Sequence[dict], *, title_width: int = 44, id_width: int = 28) -> str:
    """Rank, id, score (3 decimals) and title, one line per result."""
    ranking = check_scored_ranking(ranking)
    check_int(title_width, "title_width", low=1, high=1000)
    check_int(id_width, "id_width", low=1, high=1000)
    if not ranking:
        return Table("(no results)")
    lines = [f"{'#':>2}  {'id':<{id_width}} {'score':>8}  title"]
    for rank, r in enumerate(ranking, start=1):
        lines.append(f"{rank:>2}  {cut_text(r['id'], id_width):<{id_width}} {r['score']:>8.3f}  "
                     f"{cut_text(r.get('title', ''), title_width)}")
    return Table("\n".join(lines))


def show(ranking: Sequence[dict], **options) -> None:
    """Print ``ranking_table``."""
    print(ranking_table(ranking, **options))


def parts_table(hit) -> str:
    """What each part (a query word, a leg, a passage) contributed to one hit; the parts add up to its score.

    A hit without parts says why it has none, instead of pretending.
    """
    parts = check_scored(hit, "hit", parts=True)["parts"]
    if parts is None:
        return Table(f"{hit['id']}  score {hit['score']:.3f}  (no parts: {hit.get('why') or 'none given'})")
    lines = [f"{hit['id']}  score {hit['score']:.3f} ="]
    for name, part in parts.items():
        lines.append(f"    {part:>8.3f}  {name}")
    return Table("\n".join(lines))


def _move(rank_before: int | None, rank_after: int) -> str:
    if rank_before is None:
        return "new"
    delta = rank_before - rank_after
    return "=" if delta == 0 else (f"↑{delta}" if delta > 0 else f"↓{-delta}")


def side_by_side(before: Sequence[dict], after: Sequence[dict], *,
                 labels: tuple[str, str] = ("before", "after"), id_width: int = 26) -> str:
    """Two rankings next to each other; the right one says how each page moved (↑2, ↓1, =, new)."""
    before, after = check_scored_ranking(before, "before"), check_scored_ranking(after, "after")
    before_rank = {r["id"]: i for i, r in enumerate(before, start=1)}
    width = check_int(id_width, "id_width", low=1, high=1000) + 11
    lines = [f"{'':>2}  {labels[0]:<{width}}  {labels[1]}"]
    for i in range(max(len(before), len(after))):
        left = right = ""
        if i < len(before):
            r = before[i]
            left = f"{cut_text(r['id'], id_width):<{id_width}} {r['score']:>8.3f}"
        if i < len(after):
            r = after[i]
            right = (f"{cut_text(r['id'], id_width):<{id_width}} {r['score']:>8.3f}  "
                     f"{_move(before_rank.get(r['id']), i + 1)}")
        lines.append(f"{i + 1:>2}  {left:<{width}}  {right}".rstrip())
    if not before and not after:
        lines.append("    (no results on either side)")
    return Table("\n".join(lines))


def bump_chart(rankings: dict, *, top: int = 5, ax=None, title: str = "", xlabel: str = ""):
    """Ranks across a knob's values: one line per page that reaches the top ``top`` anywhere.

    ``rankings`` maps each value of the knob to the ranking it produced.
    """
    import matplotlib.pyplot as plt

    if not isinstance(rankings, Mapping):
        raise BadArgument(f"rankings must be a dict of knob value → ranking, not {type(rankings).__name__}")
    rankings = {v: check_scored_ranking(r, f"rankings[{short_repr(v)}]") for v, r in rankings.items()}
    top = check_int(top, "top", low=1, high=1000)  # ranks 1 to top, and one step below the chart
    values = list(rankings)
    pages = sorted({r["id"] for ranking in rankings.values() for r in ranking[:top]}, key=str)  # 3 and "a"
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    ends: dict[int, list] = {}  # last rank → the pages (and their colours) that end there
    for page in pages:
        ranks = []
        for v in values:
            ids = [r["id"] for r in rankings[v]]
            # A page that fell below the chart sits one step under the last rank.
            ranks.append(ids.index(page) + 1 if page in ids[:top] else top + 1)
        (line,) = ax.plot(range(len(values)), ranks, marker="o")
        ends.setdefault(ranks[-1], []).append((page, line.get_color()))
    # Several pages can end below the chart, on the same point: their labels are stacked 9 points
    # apart around it, each in its line's colour, instead of printed over each other.
    for rank, group in ends.items():
        for i, (page, color) in enumerate(group):
            ax.annotate(page, (len(values) - 1, rank), xytext=(6, 9 * ((len(group) - 1) / 2 - i)),
                        textcoords="offset points", va="center", fontsize=8, color=color)
    ax.set_xticks(range(len(values)), [str(v) for v in values])
    ax.set_yticks(range(1, top + 2), [str(i) for i in range(1, top + 1)] + [f">{top}"])
    ax.invert_yaxis()
    ax.set_ylabel("rank")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.margins(x=0.05)
    ax.figure.subplots_adjust(right=0.72)
    return ax


# ---------------------------------------------------------------- the sentence that matches, its words marked

# A hit's snippet is its best sentence, cut by the collection's one splitter (core.sentences); a « sentence » of
# a PDF's table or code can be long: past SNIPPET_WORDS words, a window of it is shown.
#: The longest snippet, in words (FTS5's snippet() is given 10 tokens by rung N0; a sentence reads better).
SNIPPET_WORDS = 28


@dataclass(frozen=True)
class Sentence:
    """The best-matching sentence of a text: where it is, the query words it holds, and the snippet to show."""

    start: int
    end: int
    matched: tuple
    snippet: str


@lru_cache(maxsize=256)
def _query_words(query: str) -> dict[str, float]:
    words = tokenise(query)
    kept = [w for w in words if w not in FRENCH_STOPWORDS and len(w) > 1]
    return dict.fromkeys(kept or words, 1.0)


#: The letters folded the way ``tokenise`` folds them, one character for one so that offsets stay: Latin,
#: Latin Extended and Additional, Greek and Cyrillic (« É » → « e », « Ά » → « α »).
_RANGES = [(0x00, 0x250), (0x370, 0x530), (0x1E00, 0x1F00)]


@lru_cache(maxsize=1)
def _folding() -> tuple[dict, dict]:
    """A translation table folding a letter to the one letter it folds to, and the letters that fold to
    two (« œ » → « oe », « ß » → « ss », « ﬁ » → « fi »), which a query word's pattern allows instead."""
    table, double = {}, {}
    for code in [c for low, high in _RANGES for c in range(low, high)] + list(range(0xFB00, 0xFB07)):
        ch = chr(code)
        if not ch.isalnum():
            continue
        folded = "".join(tokenise(ch))
        if len(folded) == 1:
            table[code] = folded
        elif len(folded) == 2:
            double.setdefault(folded, []).append(ch)
    return table, double


def _word_pattern(word: str) -> str:
    """A folded word as a pattern over folded text: each pair a ligature stands for may be that ligature."""
    _, double = _folding()
    out, i = [], 0
    while i < len(word):
        pair = word[i:i + 2]
        if pair in double:
            out.append(f"(?:{re.escape(pair)}|[{re.escape(''.join(double[pair]))}])")
            i += 2
        else:
            out.append(re.escape(word[i]))
            i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def _query_pattern(words: tuple) -> re.Pattern:
    """One pattern for all of a query's folded words, each a whole word (group ``w<i>``: word i)."""
    alternatives = "|".join(f"(?P<w{i}>{_word_pattern(w)})" for i, w in enumerate(words))
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", re.IGNORECASE)


def best_sentence(text: str, query: str, *, parts: dict | None = None) -> Sentence | None:
    """The sentence of ``text`` that holds the most of the query's words (weighted by ``parts`` when a
    rung gives each word's part of the score, as BM25 does), its words marked ``[like this]``.

    The same rule for every rung: the distinct query words a sentence holds (stop words left out),
    each counted once with its weight; ties go to more occurrences, then to the earlier sentence. A
    word matches as the tokenizer folds it (« conges » finds « Congés », « oeuvre » finds « œuvre »).
    A text that holds none of them (a vector hit can) gives its first sentence, unmarked. ``None`` for
    an empty text. Cost: one translation and one pass of one pattern over the text.
    """
    if check_text(text, "text", allow_none=True) is None or not text.strip():
        return None
    weights = dict(_query_words(check_query(query)))  # a copy: the parts below are this hit's
    for word, part in (parts if isinstance(parts, Mapping) else {}).items():  # a vector hit has none
        if word in weights and isinstance(part, (int, float)) and part > 0:
            weights[word] = float(part)
    words = tuple(weights)
    folded = text.translate(_folding()[0])  # one character for one: a match's offsets are the text's
    found = [(m.start(), m.end(), words[int(m.lastgroup[1:])]) for m in _query_pattern(words).finditer(folded)] \
        if words else []
    spans = sentences.spans(text)  # the collection's one splitter
    if not spans:
        return None
    starts = [a for a, _ in spans]
    per_sentence: dict[int, list] = {}
    for hit in found:
        per_sentence.setdefault(bisect.bisect_right(starts, hit[0]) - 1, []).append(hit)
    best = max(per_sentence.items(), default=(0, []),
               key=lambda kv: (sum(weights[w] for w in {h[2] for h in kv[1]}), len(kv[1]), -kv[0]))
    start, end = spans[best[0]]
    hits = [h for h in best[1] if start <= h[0] < end]
    tokens = [(m.start(), m.end(), None) for m in WORD.finditer(text, start, end)]
    return Sentence(start, end, tuple(dict.fromkeys(h[2] for h in hits)), _marked(text, tokens, hits, start, end))


def _window(words: list, hits: list) -> tuple[int, int]:
    """The SNIPPET_WORDS words (as indexes) holding the most distinct matched words, from a few before one."""
    matched_at = {a: w for a, _, w in hits}
    starts = [i for i, (a, _, _) in enumerate(words) if a in matched_at][:50] or [4]
    best, best_lo = -1, 0
    for i in starts:
        lo = max(0, i - 4)
        held = len({matched_at[a] for a, _, _ in words[lo:lo + SNIPPET_WORDS] if a in matched_at})
        if held > best:
            best, best_lo = held, lo
    return best_lo, min(best_lo + SNIPPET_WORDS, len(words))


def _marked(text: str, words: list, hits: list, start: int, end: int) -> str:
    """The sentence (or a window of SNIPPET_WORDS words around its densest matches), query words in [ ]."""
    cut_start, cut_end = start, end
    if len(words) > SNIPPET_WORDS:
        lo, hi = _window(words, hits)
        cut_start, cut_end = words[lo][0], words[hi - 1][1]
    out, at = [], cut_start
    for a, b in sorted({(a, b) for a, b, _ in hits if cut_start <= a < cut_end}):
        out += [text[at:a], "[", text[a:b], "]"]
        at = b
    out.append(text[at:cut_end])
    shown = " ".join("".join(out).split())
    return ("…" if cut_start > start else "") + shown + ("…" if cut_end < end else "")


# ---------------------------------------------------------------- hits of a folder: file, page, why
def where(hit) -> str:
    """A hit as a reader finds it again: its file, and its page when the file has pages."""
    path = check_scored(hit).get("path") or hit["id"]
    return f"{path}, p. {hit['page']}" if hit.get("page") is not None else path


def hits_table(hits, *, explain: bool = False, snippets: bool = True, width: int = 40) -> str:
    """Rank, score, file (and page), title; under each hit its section and snippet (its best sentence, the
    query's words in [ ]); ``explain``: what each part contributed, under that."""
    hits, width = check_hit_list(hits), check_int(width, "width", low=1, high=1000)
    if not hits:
        return Table("(no results)")
    lines = []
    for rank, h in enumerate(hits, start=1):
        title = cut_text(h.title, width)
        place = where(h) if "#" not in h.id else h.id + (f", p. {h['page']}" if h.get("page") is not None else "")
        lines.append(f"{rank:>2}  {h.score:>8.4f}  {place:<34} {title}")
        said = " · ".join(x for x in (f"§ {cut_text(h.get('section'), 60)}" if h.get("section") else "",
                                      cut_text(h.get("snippet"), 400) if snippets else "") if x)
        if said:
            lines.append(f"      {said}")
        if explain:
            lines += ["      " + line for line in explanation(h).split("\n")]
    return Table("\n".join(lines))


def explanation(hit) -> str:
    """The parts of one hit's score, in words: the passages a document counts, then each word or leg."""
    lines, best = [], check_hit_list([hit], "hit")[0].get("best")
    if best is not None:  # a document: which passages make its score, then why the best one scored
        check_hit_list([best], "hit's best")
        counted = " + ".join(f"{v:.3f} (passage {k.rsplit('#', 1)[-1]})" for k, v in (hit.parts or {}).items())
        page = f", page {best['page']}" if best.get("page") is not None else ""
        lines.append(f"= {counted}; best: passage {best['position']}{page}")
        hit = best
    if hit.parts is None:
        lines.append(f"no parts: {hit.why}")
        return "\n".join(lines)
    ranks = hit.get("ranks") or {}
    for name, value in hit.parts.items():
        if name in ranks:
            rank = ranks[name]
            lines.append(f"{value:>8.4f}  {name} leg, rank {rank if rank is not None else '— (not in its list)'}")
        elif value:
            lines.append(f"{value:>8.3f}  « {name} »")
    return "\n".join(lines)
