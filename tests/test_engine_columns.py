"""N1 for one query (rungs.fastbm25.ColumnBM25): FastBM25's hits exactly, from counts kept by word, without scipy.

``python -m rungs search --rung bm25`` (and the hybrid's keyword leg) used to load the folder's stored
counts into FastBM25, which imports scipy (a fifth of a second) and computes a matrix for the whole
setting. ColumnBM25 computes the query's columns only; these tests hold it to FastBM25's ids, scores
and parts float for float — on generated collections with traps, on the handbook, for every preset and
corner of the knobs, and over a folder's index as the search command loads it.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_data import SETTINGS, generated, pages, questions

from rungs import bm25, fastbm25
from rungs.core.errors import BadArgument
from rungs.yours import keywords
from rungs.yours.index import index_folder

KNOBS = [*SETTINGS, {"match": "all"}, {"weights": {"body": 0.0}}, {"saturation": "plain", "k1": 2.0},
         {"explain": False}, {"idf": "fts5", "repeats": "count"}]


def same(a, b) -> bool:
    """The same hits: ids, scores, parts, titles and reasons, exactly (not to a tolerance)."""
    return [(h.id, h.score, h.parts, h.title, h.why) for h in a] == [(h.id, h.score, h.parts, h.title, h.why) for h in b]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("knobs", KNOBS, ids=[str(k) for k in KNOBS])
def test_columns_give_the_fast_paths_hits_exactly_on_generated_collections(seed, knobs):
    docs, queries = generated(seed)
    fast = fastbm25.FastBM25.from_documents(docs)
    columns = fastbm25.ColumnBM25.from_fast(fast)
    for q in queries + ["m1 m1 m2", "nothing here", ""]:
        for limit in (1, 3, 100):
            assert same(fast.search(q, limit=limit, **knobs), columns.search(q, limit=limit, **knobs)), (q, limit)


def test_columns_give_the_fast_paths_hits_exactly_on_the_handbook():
    fast = fastbm25.FastBM25.from_documents(pages(), stopwords=True)
    columns = fastbm25.ColumnBM25.from_fast(fast)
    for q in questions():
        assert same(fast.search(q["question"], limit=10), columns.search(q["question"], limit=10)), q["question"]


@pytest.fixture(scope="module")
def folder_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("folder")
    for p in pages()[:40]:
        (folder / f"{p['id']}.md").write_text(f"# {p['title']}\n\n{p['body']}\n", encoding="utf-8")
    return index_folder(folder, vectors=False, size=400, overlap=50)


def _as_before(index):
    """What a search loaded before ColumnBM25: FastBM25 over the same stored counts, stop words dropped."""
    import numpy as np
    from scipy import sparse

    made = keywords.build(index.db)
    ids, words = made["ids"], made["vocabulary"]
    stops = keywords.stopset(True)
    keep = [j for j, w in enumerate(words) if w not in stops]
    counts = {}
    for f in keywords.FIELDS:
        data, cols, starts = (np.array(a) for a in made["parts"][f])
        matrix = sparse.csr_matrix((data.astype(float), cols, starts), shape=(len(ids), len(words)))
        counts[f] = matrix.tocsc()[:, keep]
    titles = index._titles()
    return fastbm25.FastBM25(ids, keywords.FIELDS, counts, {words[j]: c for c, j in enumerate(keep)},
                             {pid: titles.get(pid.rsplit("#", 1)[0], "") for pid in ids},
                             {"stopwords": True, "stem": None})


@pytest.mark.parametrize("knobs", KNOBS[:8], ids=[str(k) for k in KNOBS[:8]])
def test_a_folders_stored_counts_rank_as_they_did_before(folder_index, knobs):
    # The before/after check of the search command's keyword rung: the same passages, scores and parts.
    before, after = _as_before(folder_index), folder_index.retriever("bm25", level="passage").inner
    assert isinstance(after, fastbm25.ColumnBM25)
    for q in questions()[:40]:
        assert same(before.search(q["question"], limit=20, **knobs), after.search(q["question"], limit=20, **knobs))


def test_a_file_written_by_an_older_rungs_is_read_too(folder_index, tmp_path):
    # Counts stored by page (the layout before this one) are turned by word when loaded: the same hits.
    import numpy as np

    made = keywords.build(folder_index.db)
    old = {f: tuple(np.array(a) for a in made["parts"][f]) for f in keywords.FIELDS}
    arrays = {"ids": keywords._texts(made["ids"]), "vocabulary": keywords._texts(made["vocabulary"])}
    for f, (data, cols, starts) in old.items():
        arrays.update({f"{f}_data": data.astype(float), f"{f}_cols": cols.astype(np.int32), f"{f}_starts": starts})
    words = keywords._untexts(arrays["vocabulary"])
    columns = {f: keywords._columns(arrays, f, len(words)) for f in keywords.FIELDS}
    reread = fastbm25.ColumnBM25(made["ids"], keywords.FIELDS, columns, words,
                                 folder_index.retriever("bm25", level="passage").inner.titles,
                                 {"stopwords": True, "stem": None}, drop=keywords.stopset(True))
    stored = folder_index.retriever("bm25", level="passage").inner
    for q in questions()[:20]:
        assert same(stored.search(q["question"], limit=10), reread.search(q["question"], limit=10))


def test_a_search_process_never_imports_scipy(folder_index):
    code = ("import sys\nfrom rungs.yours.index import open_index\n"
            f"r = open_index({str(folder_index.path)!r}).retriever('bm25')\n"
            "assert r.search('congés payés', limit=3)\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    root = str(Path(__file__).resolve().parent.parent)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": root}, cwd=root)
    assert out.stdout.strip() == "[]"


def test_from_fast_names_what_it_cannot_read():
    with pytest.raises(BadArgument, match="FastBM25"):
        fastbm25.ColumnBM25.from_fast(bm25.build_index(pages()[:3]))
