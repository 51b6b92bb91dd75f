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

Two decisions are yours, both search-time knobs: the column ``weights``
(title vs body) and the matching rule (``match="any"`` joins the words with
OR, ``"all"`` is FTS5's implicit AND).

Your database is yours: the index lives in a table of its own
(``rungs_pages`` unless you name another), and ``FtsIndex`` refuses to touch
a table of that name that it did not create.
"""

from __future__ import annotations

import sqlite3
import unicodedata

from .errors import BadArgument, RungsError, check_choice, check_number, check_query
from .handbook import duplicates
from .retrieval import Hit, Retriever
from .text import WORD

#: Where rungs keeps the names of the tables it created in a database, so it never drops one of yours.
OWNED = "rungs_owned_tables"


class FtsSyntaxError(RungsError, ValueError):
    """FTS5 read the text as query syntax and rejected it."""


class IndexConflict(RungsError, ValueError):
    """The database already holds a table of that name that rungs did not create; nothing was changed."""


class IndexClosed(RungsError, RuntimeError):
    """The index's database connection was closed."""


def _nfc(text):
    # NFC first: a decomposed « é » (e + accent) would otherwise be cut in two.
    return unicodedata.normalize("NFC", text) if text else text


def words(query: str) -> list[str]:
    """The query's words, as typed (lower case, accents kept: FTS5 folds them); punctuation is not a word."""
    return WORD.findall(_nfc(query).lower())


def match_expression(query: str, match: str = "any") -> str:
    """A safe FTS5 expression: every word quoted, so nothing in it is syntax; a repeated word counts once.

    >>> match_expression('c++ OR "NEAR(" state-of-the-art', "all")
    '"c" "or" "near" "state" "of" "the" "art"'
    """
    check_choice(match, "match", ("any", "all"))
    # Lower case, so that OR / NOT / NEAR are words, never operators; a word typed twice is not twice as important.
    quoted = [f'"{w}"' for w in dict.fromkeys(words(query))]
    return (" OR " if match == "any" else " ").join(quoted)


class FtsIndex(Retriever):
    """An FTS5 table ``(id, title, body)`` built from documents; ``search`` ranks them by FTS5's ``bm25()``.

    ``path``: ``":memory:"`` (the default) or a database file; ``table``: the
    table's name. Search-time knobs: ``weights`` ({"title": …, "body": …},
    1.0 each unless given) and ``match`` (``"any"`` or ``"all"``).
    """

    name = "FTS5"
    defaults = {"weights": None, "match": "any"}

    def __init__(self, documents: list[dict], *, path: str = ":memory:", table: str = "rungs_pages"):
        super().__init__()
        if not table.isidentifier():
            raise BadArgument(f"table must be a plain name (letters, digits, _), not {table!r}")
        ids = [str(d["id"]) for d in documents]
        dup = duplicates(ids)
        if dup:
            raise BadArgument(f"duplicate document ids {dup}: each document needs its own id")
        self.table = table
        self.db = sqlite3.connect(path)
        self._claim(table)
        # remove_diacritics 2 folds every Latin accent: « conges » finds « congés ».
        self.db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5("
                        "id UNINDEXED, title, body, tokenize = 'unicode61 remove_diacritics 2')")
        self.db.executemany(f"INSERT INTO {table}(id, title, body) VALUES (?, ?, ?)",
                            [(i, _nfc(str(d.get("title") or "")), _nfc(d.get("body") or None))
                             for i, d in zip(ids, documents)])
        self.db.commit()

    def _claim(self, table: str) -> None:
        """Drop the table only if rungs made it; a table of yours of the same name stops everything."""
        db = self.db
        db.execute(f"CREATE TABLE IF NOT EXISTS {OWNED} (name TEXT PRIMARY KEY)")
        exists = db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        ours = db.execute(f"SELECT 1 FROM {OWNED} WHERE name = ?", (table,)).fetchone()
        if exists and not ours:
            db.close()
            raise IndexConflict(f"the database already has a table named {table!r} that rungs did not create; "
                                "nothing was changed. Pass table='another_name' to keep both.")
        if exists:
            db.execute(f"DROP TABLE {table}")
        db.execute(f"INSERT OR IGNORE INTO {OWNED}(name) VALUES (?)", (table,))

    def check_knobs(self, knobs: dict) -> dict:
        weights = knobs["weights"] or {}
        if not isinstance(weights, dict):
            raise BadArgument(f"weights must be a dict like {{'title': 2.0, 'body': 1.0}}, not {weights!r}")
        unknown = sorted(set(weights) - {"title", "body"})
        if unknown:
            raise BadArgument(f"weights name fields the index does not have: {unknown} (it has title, body)")
        clean = {f: check_number(weights.get(f, 1.0), f"weights[{f!r}]", low=0.0) for f in ("title", "body")}
        return {"weights": clean, "match": check_choice(knobs["match"], "match", ("any", "all"))}

    def _search(self, query, limit, knobs):
        expression = match_expression(query, knobs["match"])
        if not expression:
            return []  # only punctuation: no word to look for
        return self._run(expression, limit, knobs["weights"])

    def raw_search(self, expression: str, *, limit: int = 5, weights: dict | None = None) -> list[Hit]:
        """Hand ``expression`` to FTS5 as it is — operators, quotes and all. For learning its syntax.

        A malformed expression raises ``FtsSyntaxError`` with SQLite's own words.
        """
        check_query(expression, name="expression")
        settings = self._settings({"weights": weights})
        from .errors import check_limit
        limit = check_limit(limit)
        if limit == 0:
            return []
        return self._run(expression, limit, settings["weights"])

    def _run(self, expression, limit, weights):
        # bm25() is lower-is-better and negative; we flip the sign so higher is better,
        # like every other ranking in the collection. Ties are broken by id.
        sql = (f"SELECT id, title, -bm25({self.table}, 0.0, ?, ?) AS score, "
               f"snippet({self.table}, -1, '[', ']', '…', 10) FROM {self.table} WHERE {self.table} MATCH ? "
               "ORDER BY score DESC, id LIMIT ?")
        try:
            rows = self.db.execute(sql, (weights["title"], weights["body"], expression, limit)).fetchall()
        except sqlite3.ProgrammingError:
            raise IndexClosed("the index's database is closed: build the index again") from None
        except sqlite3.OperationalError as err:
            raise FtsSyntaxError(
                f"FTS5 could not read {expression[:200]!r} as a query ({err}); "
                "FtsIndex.search quotes every word so user text is never syntax") from None
        why = "FTS5's bm25() returns one number per row; rung N1 recomputes it word by word"
        # −bm25 of a page holding a word in more than half the rows can be a tiny negative zero: keep 0.0.
        return [Hit(id=i, title=t, score=float(s) + 0.0, why=why, extra={"snippet": snip})
                for i, t, s, snip in rows]

    def close(self) -> None:
        self.db.close()
