"""N0 — full-text search in SQLite FTS5: the database keeps the index for free.

What it is for: the first thing to try. Python's standard library already
holds a full-text engine; one ``CREATE VIRTUAL TABLE`` gives an inverted
index, a BM25 ranking (``bm25()``), column weights and highlighted snippets.

What it costs: nothing to install, about a millisecond a query on the
handbook. What you give up: the ranking is a closed box (k1 = 1.2 and b = 0.75
are compiled in), and the query is a small language of its own — ``AND``,
``OR``, ``NOT``, ``NEAR``, quotes, ``*``, ``-``, ``:`` — so a learner's raw
question (« c++ », « state-of-the-art », a stray ") is a syntax error waiting
to happen. ``search`` never hands user text to FTS5 as syntax: it cuts the
query into words and quotes each one.

Two decisions are yours: the column weights (title vs body) and the matching
rule (``match="all"`` is FTS5's implicit AND, ``"any"`` joins words with OR).
"""

from __future__ import annotations

import sqlite3
import unicodedata

from .handbook import duplicates
from .text import WORD


class FtsSyntaxError(ValueError):
    """FTS5 read the text as query syntax and rejected it."""


def build(pages: list[dict], path: str = ":memory:") -> sqlite3.Connection:
    """An FTS5 table ``pages(id, title, body)`` filled with ``pages``; returns the connection."""
    dup = duplicates(p["id"] for p in pages)
    if dup:
        raise ValueError(f"duplicate page ids {dup}: each page needs its own id")
    db = sqlite3.connect(path)
    db.execute("DROP TABLE IF EXISTS pages")
    # remove_diacritics 2 folds every Latin accent: « conges » finds « congés ».
    db.execute("CREATE VIRTUAL TABLE pages USING fts5("
               "id UNINDEXED, title, body, tokenize = 'unicode61 remove_diacritics 2')")
    # NFC first: a decomposed « é » (e + accent) would otherwise be cut in two.
    db.executemany("INSERT INTO pages(id, title, body) VALUES (?, ?, ?)",
                   [(p["id"], _nfc(p["title"]), _nfc(p.get("body"))) for p in pages])
    db.commit()
    return db


def _nfc(text):
    return unicodedata.normalize("NFC", text) if text else text


def words(query: str) -> list[str]:
    """The query's words, as typed (lower case, accents kept: FTS5 folds them); punctuation is not a word."""
    return WORD.findall(_nfc(query).lower())


def match_expression(query: str, match: str = "all") -> str:
    """A safe FTS5 expression: every word quoted, so nothing in it is syntax.

    >>> match_expression('c++ OR "NEAR(" state-of-the-art')
    '"c" "or" "near" "state" "of" "the" "art"'
    """
    if match not in ("all", "any"):
        raise ValueError(f"match must be 'all' or 'any', not {match!r}")
    # Lower case, so that OR / NOT / NEAR are words, never operators.
    quoted = [f'"{w}"' for w in words(query)]
    return (" OR " if match == "any" else " ").join(quoted)


def _run(db, expression, limit, weights):
    wt, wb = weights
    # bm25() is lower-is-better and negative; we flip the sign so higher is better,
    # like every other ranking in the collection. Ties are broken by id.
    sql = ("SELECT id, title, -bm25(pages, 0.0, ?, ?) AS score, "
           "snippet(pages, -1, '[', ']', '…', 10) FROM pages WHERE pages MATCH ? "
           "ORDER BY score DESC, id LIMIT ?")
    try:
        rows = db.execute(sql, (float(wt), float(wb), expression, limit)).fetchall()
    except sqlite3.OperationalError as err:
        raise FtsSyntaxError(
            f"FTS5 could not read {expression!r} as a query ({err}); "
            "rungs.fts.search quotes every word so user text is never syntax") from None
    return [{"id": i, "title": t, "score": s, "snippet": snip} for i, t, s, snip in rows]


def _check_limit(limit):
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an integer, not {type(limit).__name__}")
    if limit < 0:
        raise ValueError(f"limit must be 0 or more, not {limit}")


def search(index: sqlite3.Connection, query: str, *, limit: int = 5,
           weights: tuple[float, float] = (1.0, 1.0), match: str = "all") -> list[dict]:
    """Rank pages for ``query``: each result has ``id``, ``title``, ``score`` (−bm25) and ``snippet``.

    The user's text is never FTS5 syntax: an empty query, or one of only
    punctuation, returns no results; ``c++`` searches for the word « c ».
    """
    _check_limit(limit)
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, not {type(query).__name__}")
    expression = match_expression(query, match)
    if not expression or limit == 0:
        return []
    return _run(index, expression, limit, weights)


def raw_search(index: sqlite3.Connection, expression: str, *, limit: int = 5,
               weights: tuple[float, float] = (1.0, 1.0)) -> list[dict]:
    """Hand ``expression`` to FTS5 as it is — operators, quotes and all. For learning its syntax.

    A malformed expression raises ``FtsSyntaxError`` with SQLite's own words.
    """
    _check_limit(limit)
    return _run(index, expression, limit, weights)
