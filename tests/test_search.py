"""N0 and N1: FTS5 parity, tie order, knobs, and every bad input named."""

import math
import random

import pytest

from rungs import bm25, fts
from rungs.core.display import side_by_side, ranking_table
from rungs.core.errors import BadArgument

# Accented letters that unicode61's remove_diacritics 2 and rungs.text both fold the same way.
LETTERS = "abcdeéèêfgàâhiîïjklmnoôpqrstuùûvçz"


def _corpus(rng, n_docs, vocabulary):
    docs = []
    for i in range(n_docs):
        title = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 4)))
        # Some bodies empty, some long; Zipf-ish word choice so words repeat inside a page.
        n_words = rng.choice([0, 1, 3, 10, 40, 120])
        body = " ".join(vocabulary[min(int(rng.paretovariate(1.0)) - 1, len(vocabulary) - 1)]
                        for _ in range(n_words))
        docs.append({"id": f"d{i:03d}", "title": title or "t", "body": body or None})
    return docs


def _vocabulary(rng, size):
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 6))))
    return sorted(words)


@pytest.mark.parametrize("seed", range(12))
def test_fts5_preset_equals_sqlite_bm25_to_1e9(seed):
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng, 40)
    docs = _corpus(rng, rng.randint(2, 60), vocabulary)
    db, index = fts.FtsIndex(docs), bm25.build_index(docs)
    checked = 0
    for _ in range(25):
        query = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 4)))
        if rng.random() < 0.3:  # a repeated word counts twice in FTS5
            query += " " + query.split()[0]
        wt, wb = rng.choice([1.0, 0.5, 2.0, 7.5]), rng.choice([1.0, 0.0, 3.0])
        match = rng.choice(["all", "any"])
        # raw_search: FTS5 counts a repeated word twice, and so does the FTS5 preset.
        expression = (" OR " if match == "any" else " ").join(f'"{w}"' for w in query.split())
        theirs = db.raw_search(expression, limit=1000, weights={"title": wt, "body": wb})
        ours = index.search(query, limit=1000, weights={"title": wt, "body": wb}, **{**bm25.FTS5, "match": match})
        assert [r["id"] for r in ours] == [r["id"] for r in theirs], query
        for a, b in zip(theirs, ours):
            assert math.isclose(a["score"], b["score"], rel_tol=1e-9, abs_tol=1e-12), (query, a, b)
        checked += len(ours)
    assert checked > 0


def test_ties_are_broken_by_id_and_parts_add_up():
    docs = [{"id": i, "title": "", "body": "same words here"} for i in ["c", "a", "b"]]
    index = bm25.build_index(docs)
    ranking = index.search("same")
    assert [r.id for r in ranking] == ["a", "b", "c"]
    assert len({r.score for r in ranking}) == 1
    for r in bm25.build_index([{"id": "x", "title": "t w", "body": "w w v"}]).search("w v zz"):
        assert math.isclose(sum(r.parts.values()), r.score)
        assert r.parts["zz"] == 0.0


def test_each_knob_changes_something_on_the_handbook():
    from rungs.lab.handbook import load_pages
    index = bm25.build_index(load_pages())
    ids = lambda **kw: [r.id for r in index.search(kw.pop("q"), **kw)]
    assert ids(q="sécurité", k1=1.2) != ids(q="sécurité", k1=0.0)
    assert ids(q="Que faire si j'ai perdu mon badge ?", b=0.75) != ids(q="Que faire si j'ai perdu mon badge ?", b=0.0)
    q = "Quelle indemnité pour les jours de télétravail ?"
    assert ids(q=q)[0] == "teletravail" and ids(q=q, weights={"title": 0, "body": 1})[0] != "teletravail"
    assert ids(q="harcèlement sanction", match="all") == ["reglement-interieur"]


def test_repeated_words_count_once_by_default_and_twice_in_fts5_mode():
    index = bm25.build_index([{"id": "a", "title": "", "body": "x y"}, {"id": "b", "title": "", "body": "y z"}])
    once = index.search("x x")[0].score
    assert index.search("x")[0].score == once
    assert math.isclose(index.search("x x", repeats="count")[0].score, 2 * once)


def test_lucene_preset_has_no_k1_plus_one_factor():
    docs = [{"id": "a", "body": "x x y"}, {"id": "b", "body": "y"}, {"id": "c", "body": "z"}]
    index = bm25.build_index(docs, fields=("body",))
    score = index.search("x", **bm25.LUCENE)[0].score
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    avg = (3 + 1 + 1) / 3
    assert math.isclose(score, idf * 2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / avg)), rel_tol=1e-12)


@pytest.mark.parametrize("query", ["c++", "state-of-the-art", '"', "congés or payés", "NEAR(", "a AND", "*", "-x", "x:y"])
def test_user_text_is_never_fts5_syntax(query):
    db = fts.FtsIndex([{"id": "a", "title": "C++ et NEAR", "body": "state of the art, or not"}])
    db.search(query, match="all")  # never raises
    db.search(query, match="any")


def test_raw_fts5_syntax_errors_are_named():
    db = fts.FtsIndex([{"id": "a", "title": "t", "body": "b"}])
    with pytest.raises(fts.FtsSyntaxError, match="quotes every word"):
        db.raw_search("c++")


def test_fts_index_never_drops_a_table_it_did_not_create(tmp_path):
    import sqlite3
    path = tmp_path / "mine.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE rungs_pages (x)")
        db.execute("INSERT INTO rungs_pages VALUES ('my row')")
    with pytest.raises(fts.IndexConflict, match="did not create"):
        fts.FtsIndex([{"id": "a", "title": "t", "body": "b"}], path=str(path))
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT x FROM rungs_pages").fetchall() == [("my row",)]
    # Another name keeps both; building again under a name rungs owns replaces only its own table.
    index = fts.FtsIndex([{"id": "a", "title": "t", "body": "b"}], path=str(path), table="handbook")
    index.close()
    index = fts.FtsIndex([{"id": "b", "title": "t", "body": "b"}], path=str(path), table="handbook")
    assert [h.id for h in index.search("t")] == ["b"]
    index.close()
    with pytest.raises(fts.IndexClosed, match="closed"):
        index.search("t")


def test_duplicate_ids_are_refused_by_both_indexes():
    docs = [{"id": "a", "title": "x", "body": None}, {"id": "a", "title": "y", "body": None}]
    with pytest.raises(BadArgument, match="duplicate"):
        fts.FtsIndex(docs)
    with pytest.raises(BadArgument, match="duplicate"):
        bm25.build_index(docs)


@pytest.mark.parametrize("kw, message", [
    ({"k1": -1}, "k1"), ({"b": 1.5}, "b must"), ({"match": "some"}, "match"),
    ({"weights": {"summary": 1}}, "fields the index does not have"), ({"idf": "bm11"}, "idf"),
    ({"k1": float("nan")}, "k1 must be a finite"), ({"weights": {"title": float("inf")}}, "weights"),
    ({"weights": {"title": -1}}, "weights"), ({"b": True}, "b must be a real number"),
])
def test_bad_knobs_are_named_before_any_work(kw, message):
    index = bm25.build_index([{"id": "a", "title": "x", "body": "y"}])
    with pytest.raises(BadArgument, match=message):
        index.search("x", **kw)
    # …even when no page would match, and even for an empty query.
    with pytest.raises(BadArgument, match=message):
        index.search("zzz", **kw)
    with pytest.raises(BadArgument, match=message):
        index.search("", **kw)


def test_fields_must_be_a_list_of_names():
    with pytest.raises(BadArgument, match="fields must be a list"):
        bm25.build_index([{"id": "a", "title": "x"}], fields="title")


def test_display_shows_moves_and_empty_rankings():
    before = [{"id": "a", "score": 2.0}, {"id": "b", "score": 1.0}]
    after = [{"id": "b", "score": 3.0}, {"id": "c", "score": 1.5}, {"id": "a", "score": 1.0}]
    text = side_by_side(before, after)
    assert "↑1" in text and "new" in text and "↓2" in text
    assert ranking_table([]) == "(no results)"
    assert "2.000" in ranking_table(before)
