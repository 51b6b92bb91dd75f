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
a table of that name that it did not create — and when it refuses, nothing in
the database has changed, not even the small table where rungs notes what it
made. A file that is not a SQLite database (your notes, an empty file) is
refused before it is opened: SQLite would otherwise make it one.
"""

from __future__ import annotations

import os
import re
import sqlite3

from .core.documents import check_documents
from .core.errors import BadArgument, RungsError, short_repr, check_choice, check_limit, check_query
from .core.retrieval import Hit, Retriever, check_weights
from .core.text import WORD, fts_text, tokenise

#: Where rungs keeps the names of the tables it created in a database, so it never drops one of yours.
OWNED = "rungs_owned_tables"

#: A raw expression is for learning FTS5's syntax: past this many words, FTS5's parsing and merging
#: of the terms costs time that grows with the square of their number (1,000 words: seconds).
MAX_RAW_WORDS = 32

# A table name rungs writes into SQL: ASCII letters, digits and _, as SQLite reads them unquoted.
_TABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
# FTS5 keeps a table's index in five shadow tables named after it.
_SHADOWS = ("_data", "_idx", "_content", "_docsize", "_config")
_SCHEMA = "USING fts5(id UNINDEXED, title, body, tokenize = 'unicode61 remove_diacritics 2')"


class FtsSyntaxError(RungsError, ValueError):
    """FTS5 read the text as query syntax and rejected it."""


class IndexConflict(RungsError, ValueError):
    """The database already holds a table of that name that rungs did not create; nothing was changed."""


class IndexClosed(RungsError, RuntimeError):
    """The index's database connection was closed."""


def _not_a_file_of_yours(path) -> None:
    """An existing file must already be a SQLite database: an empty file or your notes would become one."""
    if str(path) == ":memory:" or str(path).startswith("file:") or not os.path.isfile(path):
        return
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as err:
        raise BadArgument(f"path {short_repr(str(path))} cannot be read ({err.strerror or err})") from None
    if not head:
        raise BadArgument(f"path {short_repr(str(path))} is an empty file, not a SQLite database: it was not touched; "
                          "give a new file name, or a database of yours")
    if head != b"SQLite format 3\x00":
        raise BadArgument(f"path {short_repr(str(path))} is not a SQLite database: it was not touched; give a new file "
                          "name, or a database of yours")


def words(query: str) -> list[str]:
    """The query's words as N1 cuts them (lower case, accents folded, ligatures spelled out); punctuation is
    not a word. FTS5 stores its text through ``fts_text``, so these are the words it holds."""
    return tokenise(check_query(query))


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
        if not isinstance(table, str) or not _TABLE.fullmatch(table) or table.lower().startswith("sqlite_") \
                or table.lower() == OWNED:
            raise BadArgument(f"table must be a plain name (ASCII letters, digits, _; not sqlite_…), not {short_repr(table)}")
        if not isinstance(path, (str, os.PathLike)):
            raise BadArgument(f"path must be ':memory:' or a database file's path, not {type(path).__name__}")
        documents = check_documents(documents)
        ids = [str(d["id"]) for d in documents]
        _not_a_file_of_yours(path)
        try:
            db = sqlite3.connect(path)
        except sqlite3.Error as err:
            raise BadArgument(f"path {short_repr(str(path))} cannot be opened as a SQLite database ({err})") from None
        self._attach(db, table)  # the one way an FtsIndex gets its table: built here, or opened (``open``)
        try:
            self._claim(table)
            # remove_diacritics 2 folds every Latin accent: « conges » finds « congés ».
            self.db.execute(f'CREATE VIRTUAL TABLE "{table}" {_SCHEMA}')
            # Stored through the one normalisation, so that FTS5 cuts the words N1 cuts.
            self.db.executemany(f'INSERT INTO "{table}"(id, title, body) VALUES (?, ?, ?)',
                                [(i, fts_text(str(d.get("title") or "")), fts_text(d.get("body") or None))
                                 for i, d in zip(ids, documents)])
            self.db.commit()
        except sqlite3.Error as err:  # not a database, read-only, locked, full: said in SQLite's words
            self.db.close()
            raise BadArgument(f"path {short_repr(str(path))}: SQLite could not build the index there ({err}); "
                              "no table of yours was changed") from None

    def _claim(self, table: str) -> None:
        """Drop the table only if rungs made it; a table of yours of the same name stops everything.

        Everything is read before anything is written: a refusal leaves the database exactly as it was.
        """
        db = self.db
        # SQLite's names ignore case: « Rungs_Pages » is the same table as « rungs_pages ».
        found = db.execute("SELECT sql FROM sqlite_master WHERE lower(name) = lower(?)", (table,)).fetchone()
        bookkeeping = db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (OWNED,)).fetchone()
        ours = bookkeeping and db.execute(f"SELECT 1 FROM {OWNED} WHERE lower(name) = lower(?)", (table,)).fetchone()
        # Ours: recorded as created by rungs, and still the FTS5 table rungs creates (not one of yours
        # made later under the same name).
        if found and not (ours and _SCHEMA in (found[0] or "")):
            db.close()
            raise IndexConflict(f"the database already has a table named {table!r} that rungs did not create; "
                                "nothing was changed. Pass table='another_name' to keep both.")
        if not found:
            taken = [table + s for s in _SHADOWS if db.execute(
                "SELECT 1 FROM sqlite_master WHERE lower(name) = lower(?)", (table + s,)).fetchone()]
            if taken:
                db.close()
                raise IndexConflict(f"the database already has a table named {taken[0]!r}, which FTS5 needs for "
                                    f"the index {table!r}; nothing was changed. Pass table='another_name'.")
        db.execute(f"CREATE TABLE IF NOT EXISTS {OWNED} (name TEXT PRIMARY KEY)")  # checked: now it may write
        if found:
            db.execute(f'DROP TABLE "{table}"')
        db.execute(f"INSERT OR IGNORE INTO {OWNED}(name) VALUES (?)", (table,))

    @classmethod
    def open(cls, db: sqlite3.Connection, table: str, *, snippets: bool = True) -> "FtsIndex":
        """An FTS5 table that exists already, on an open connection (the one ``index_folder`` keeps on disk).

        The same search, knobs and safety as a table built here; nothing is created or changed.
        ``snippets=False``: hits carry no snippet (``snippets`` makes them for the few hits shown: a
        roll-up ranks 200 passages to show 5, and snippet() on 200 rows is most of a query's time).
        """
        index = cls.__new__(cls)
        index._attach(db, table, name="FTS5 (on disk)")
        index.with_snippets = snippets
        return index

    def snippets(self, query: str, ids: list[str]) -> dict[str, str]:
        """FTS5's ``snippet()`` of the rows ``ids`` for ``query`` (ten words around the matches, in [ ])."""
        expression = match_expression(query, "any")
        ids = [str(i) for i in ids][:999]  # SQLite's limit on bound values
        if not expression or not ids:
            return {}
        t = f'"{self.table}"'
        sql = (f"SELECT id, snippet({t}, -1, '[', ']', '…', 10) FROM {t} WHERE {t} MATCH ? "
               f"AND id IN ({', '.join('?' * len(ids))})")
        try:
            return dict(self.db.execute(sql, (expression, *ids)).fetchall())
        except sqlite3.Error:  # a snippet is a help to the reader, never a reason for a search to fail
            return {}

    def _attach(self, db: sqlite3.Connection, table: str, name: str | None = None) -> None:
        Retriever.__init__(self)
        self.db, self.table = db, table
        self.with_snippets = True
        if name:
            self.name = name

    def check_knobs(self, knobs: dict) -> dict:
        return {"weights": check_weights(knobs["weights"], ("title", "body"), what="field"),
                "match": check_choice(knobs["match"], "match", ("any", "all"))}

    def _search(self, query, limit, knobs):
        expression = match_expression(query, knobs["match"])
        if not expression:
            return []  # only punctuation: no word to look for
        return self._run(expression, limit, knobs["weights"])

    def raw_search(self, expression: str, *, limit: int = 5, weights: dict | None = None) -> list[Hit]:
        """Hand ``expression`` to FTS5 as it is — operators, quotes and all. For learning its syntax.

        A malformed expression raises ``FtsSyntaxError`` with SQLite's own words. At most
        ``MAX_RAW_WORDS`` words: this is for learning the syntax, not for long queries (``search`` is).
        """
        check_query(expression, name="expression")
        settings = self._settings({"weights": weights})
        limit = check_limit(limit)
        count = len(WORD.findall(expression))
        if count > MAX_RAW_WORDS:
            raise BadArgument(f"expression has {count} words; raw_search takes at most {MAX_RAW_WORDS} "
                              "(use search for long text: it quotes every word)")
        if limit == 0 or not expression.strip():
            return []
        return self._run(expression, limit, settings["weights"])

    def _run(self, expression, limit, weights):
        # bm25() is lower-is-better and negative; we flip the sign so higher is better,
        # like every other ranking in the collection. Ties are broken by id.
        t = f'"{self.table}"'
        snippet = f"snippet({t}, -1, '[', ']', '…', 10)" if self.with_snippets else "NULL"
        sql = (f"SELECT id, title, -bm25({t}, 0.0, ?, ?) AS score, {snippet} FROM {t} WHERE {t} MATCH ? "
               "ORDER BY score DESC, id LIMIT ?")
        try:
            rows = self.db.execute(sql, (weights["title"], weights["body"], expression, limit)).fetchall()
        except sqlite3.ProgrammingError as err:
            raise IndexClosed(f"the index's database cannot be used ({err}): build the index again") from None
        except sqlite3.OperationalError as err:
            # The table went away, or another program holds it. (« no such column: of » is FTS5 reading
            # « state-of-the-art » as a column filter: syntax, below.)
            if "no such table" in str(err) or "locked" in str(err):
                raise IndexClosed(f"the index's table cannot be read ({err}): build the index again") from None
            raise FtsSyntaxError(
                f"FTS5 could not read {expression[:200]!r} as a query ({err}); "
                "FtsIndex.search quotes every word so user text is never syntax") from None
        except sqlite3.DatabaseError as err:  # the file was damaged or replaced after the index was built
            raise IndexClosed(f"the index's database cannot be read ({err}): build the index again") from None
        why = "FTS5's bm25() returns one number per row; rung N1 recomputes it word by word"
        # −bm25 of a page holding a word in more than half the rows can be a tiny negative zero: keep 0.0.
        return [Hit(id=i, title=t, score=float(s) + 0.0, why=why, extra={"snippet": snip} if snip is not None else {})
                for i, t, s, snip in rows]

    def close(self) -> None:
        self.db.close()
