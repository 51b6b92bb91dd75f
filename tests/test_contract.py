"""The retrieval contract, checked over every retriever the package defines — found, not listed.

Every ``Retriever`` subclass in ``rungs`` is discovered by walking the package;
each must have a builder here (a new rung without one fails
``test_every_retriever_has_a_builder``), and every check of
``rungs.core.contract`` runs on every builder: best first, ties by id, ids
unique, parts that add up to the score (or a reason why there are none),
``limit=0`` and an empty query cost nothing — counted inside the retriever
itself — and a bad argument is named before any work is done.
"""

import importlib
import inspect
import json
import pkgutil
import sys

import numpy as np
import pytest

import rungs
from rungs import bm25, fastbm25, feedback, fts, hybrid, passages, rerank, vectors
from rungs.core.contract import CHECKS, NOT_RETRIEVERS, ContractBroken, Counted, check_hits, is_a_search_name
from rungs.core.errors import BadArgument
from rungs.core.retrieval import Hit, OnFirstSearch, Retriever
from rungs.engine import compiled, impacts, shards
from rungs.model import ScriptedClient
from rungs.yours import index as folder_index
from rungs.yours.index import index_folder

# Ties on purpose: a, b and c hold the same words; d and e differ.
DOCS = [{"id": i, "title": t, "body": b} for i, t, b in [
    ("c", "badge", "perdu le badge au travail"), ("a", "badge", "perdu le badge au travail"),
    ("b", "badge", "perdu le badge au travail"), ("e", "congés", "les congés payés et le badge"),
    ("d", "repas", "le restaurant et les titres restaurant"),
]]
QUERY = "perdu badge"


class Bag(vectors.Encoder):
    """A test double, not a model: a bag of letters, so equal texts get equal vectors (ties)."""

    name, dim = "bag-of-letters", 26

    def _documents(self, texts):
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for row, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    out[row, ord(ch) - 97] += 1
            out[row, 0] += 1  # never all zero
        return out


def _judge_replies(n):
    # A scripted judge (test double): the same level for every page, so the reranker's ties show.
    return [{"text": "2", "logprobs": [{"token": "2", "logprob": 0.0, "top": {"2": -0.1, "1": -2.5}}]}] * n


def _vectors(tmp_path):
    return vectors.VectorIndex(DOCS, Bag(), cache=vectors.VectorCache(Bag(), folder=tmp_path))


def _folder_index(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    for n, d in enumerate(DOCS):
        # Bytes apart (a file that repeats another's bytes is indexed once), the same text: the ties stay.
        (folder / f"{d['id']}.md").write_text(f"# {d['title']}\n\n{d['body']}\n" + "\n" * n, encoding="utf-8")
    return index_folder(folder, vectors=False)


def _on_disk(tmp_path):
    return _folder_index(tmp_path).retriever("fts", level="passage").inner


#: Every retriever class of the package → the ways to build one over DOCS (or a folder made of them).
BUILDERS = {
    fts.FtsIndex: {"in memory": lambda tmp: fts.FtsIndex(DOCS), "on disk": _on_disk},
    folder_index._OnDisk: {"on disk, rolled up to files": lambda tmp: _folder_index(tmp).retriever("fts")},
    bm25.Index: {"readable": lambda tmp: bm25.build_index(DOCS)},
    fastbm25.FastBM25: {"fast path": lambda tmp: fastbm25.FastBM25.from_documents(DOCS)},
    fastbm25.ColumnBM25: {"one query's columns": lambda tmp: fastbm25.ColumnBM25.from_fast(
                              fastbm25.FastBM25.from_documents(DOCS)),
                          "stored by a folder's index": lambda tmp: _folder_index(tmp).retriever(
                              "bm25", level="passage").inner},
    shards.Sharded: {"two shards, global statistics": lambda tmp: shards.Sharded(DOCS, 2).with_knobs(stats="global")},
    OnFirstSearch: {"a folder's vector leg": lambda tmp: _folder_index(tmp).retriever(
        "vectors", encoder=Bag(), level="passage").inner},
    impacts.Frozen: {"frozen impacts": lambda tmp: impacts.freeze(bm25.build_index(DOCS), k1=0.9, b=0.4)},
    compiled.FastEngine: {"compiled impacts": lambda tmp: compiled.FastEngine(fastbm25.FastBM25.from_documents(DOCS))},
    feedback.RM3: {"rm3": lambda tmp: feedback.RM3(bm25.build_index(DOCS), fb_docs=2, fb_terms=3)},
    vectors.VectorIndex: {"bag of letters": _vectors},
    hybrid.Hybrid: {"bm25 + vectors": lambda tmp: hybrid.Hybrid({"keyword": bm25.build_index(DOCS),
                                                                 "vector": _vectors(tmp)})},
    passages.PassageRetriever: {"bm25 passages": lambda tmp: passages.PassageRetriever(
        bm25.build_index(passages.split(DOCS, size=60, overlap=0)), passages.split(DOCS, size=60, overlap=0))},
    rerank.Reranker: {"scripted judge": lambda tmp: rerank.Reranker(
        bm25.build_index(DOCS), DOCS, client=ScriptedClient(_judge_replies(200)), depth=5)},
}


def discovered() -> list[type]:
    """Every concrete Retriever subclass defined in rungs, found by walking the package."""
    for info in pkgutil.walk_packages(rungs.__path__, "rungs."):
        importlib.import_module(info.name)
    found, stack = set(), [Retriever]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("rungs.") and not inspect.isabstract(sub):
                found.add(sub)
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


CASES = [(cls, way) for cls in discovered() for way in BUILDERS.get(cls, {})]


def test_every_retriever_has_a_builder():
    missing = [f"{c.__module__}.{c.__qualname__}" for c in discovered() if c not in BUILDERS]
    assert not missing, f"retrievers with no builder in tests/test_contract.py: {missing}"
    assert len(discovered()) >= 7


def search_functions() -> set[str]:
    """Every public function or method of the package named like a search, but a retriever's own ``search``."""
    for info in pkgutil.walk_packages(rungs.__path__, "rungs."):
        importlib.import_module(info.name)
    found = set()
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("rungs.") or module is None:
            continue
        for attr, value in vars(module).items():
            if getattr(value, "__module__", None) != name:
                continue  # imported from elsewhere: found where it is defined
            if inspect.isclass(value):
                found |= {f"{name}.{value.__qualname__}.{m}" for m in vars(value) if is_a_search_name(m)
                          and not (m == "search" and issubclass(value, Retriever))}
            elif callable(value) and is_a_search_name(attr):
                found.add(f"{name}.{attr}")
    return found


def test_every_function_that_searches_is_a_retriever_or_named_with_why_not():
    found = search_functions()
    assert found - set(NOT_RETRIEVERS) == set(), "searches outside the contract, not named in NOT_RETRIEVERS"
    assert set(NOT_RETRIEVERS) - found == set(), "NOT_RETRIEVERS names a function that is not there"
    assert all(len(why) > 40 for why in NOT_RETRIEVERS.values())  # a reason, not a placeholder


def test_discovery_would_see_a_new_search_function(monkeypatch):
    # A negative control: a function named like a search, planted in a rungs module, escapes the list and is seen.
    def search_fast(query):
        return []

    search_fast.__module__ = "rungs.fts"
    monkeypatch.setattr(fts, "search_fast", search_fast, raising=False)
    assert search_functions() - set(NOT_RETRIEVERS) == {"rungs.fts.search_fast"}


def test_the_engines_search_functions_keep_the_contract_of_their_hits():
    # Named in NOT_RETRIEVERS for what they return besides, never for hits that break the contract.
    from rungs.engine import maxscore

    frozen = impacts.freeze(bm25.build_index(DOCS))
    check_hits(maxscore.search(frozen, QUERY, limit=4).hits)
    check_hits(maxscore.exhaustive(frozen, QUERY, limit=4))
    for hits in fastbm25.FastBM25.from_documents(DOCS).search_many([QUERY, "restaurant"]):
        check_hits(hits)


def test_discovery_would_see_a_new_retriever():
    # A negative control: a subclass defined in a rungs module is found (and, without a builder, fails).
    namespace = {"__module__": "rungs.fts", "_search": lambda self, q, limit, knobs: []}
    new = type("NewRung", (Retriever,), namespace)
    try:
        assert new in discovered() and new not in BUILDERS
    finally:
        del new, namespace
        import gc
        gc.collect()


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("cls, way", CASES, ids=[f"{c.__name__}-{w}" for c, w in CASES])
def test_every_check_holds_for_every_retriever(cls, way, check, tmp_path):
    retriever = BUILDERS[cls][way](tmp_path)
    assert isinstance(retriever, cls)
    CHECKS[check](retriever, QUERY)


@pytest.mark.parametrize("cls, way", CASES, ids=[f"{c.__name__}-{w}" for c, w in CASES])
def test_ties_are_broken_by_id(cls, way, tmp_path):
    hits = BUILDERS[cls][way](tmp_path).search(QUERY, limit=10)
    ids = [h.id.split("#")[0].removesuffix(".md") for h in hits]
    tied = [i for i in ids if i in "abc"]
    assert tied == sorted(tied) and len(tied) == 3  # a, b, c score the same: the id decides


def test_the_checks_catch_a_retriever_that_breaks_the_contract():
    """Negative controls: each check fails on a retriever made to break exactly its promise."""
    class Unordered(bm25.Index):
        def _search(self, query, limit, knobs):
            return list(reversed(super()._search(query, limit, knobs)))

    class Eager(bm25.Index):
        def search(self, query, *, limit=5, **knobs):  # works before checking: limit=0 reaches the ranking
            self._search(query, 5, self._settings({}))
            return super().search(query, limit=limit, **knobs)

    class Lenient(bm25.Index):
        def _settings(self, knobs):
            return self.check_knobs({**self.knobs, **{k: v for k, v in knobs.items() if k in self.knobs}})

    with pytest.raises(ContractBroken, match="not best first"):
        CHECKS["ranking"](Unordered(DOCS), QUERY)
    with pytest.raises(ContractBroken, match="reached the ranking code"):
        CHECKS["costs nothing"](Eager(DOCS), QUERY)
    with pytest.raises(ContractBroken, match="was accepted"):
        CHECKS["bad arguments named"](Lenient(DOCS), QUERY)


def test_the_counter_is_inside_the_retriever():
    index = bm25.build_index(DOCS)
    with Counted(index) as calls:
        index.search(QUERY, limit=0)
        index.search(QUERY, limit=3)
    assert calls.n == 1 and "_search" not in vars(index)  # the counter is gone after the block


def test_hybrid_names_a_bad_fusion_knob_before_asking_its_legs():
    leg = bm25.build_index(DOCS)
    h = hybrid.Hybrid({"keyword": leg, "again": bm25.build_index(DOCS)})
    with Counted(leg) as calls:
        for knobs, message in [({"k": -1}, "k must be at least 0"), ({"k": float("nan")}, "finite"),
                               ({"leg_weights": {"nope": 1}}, "not given"),
                               ({"leg_weights": {"keyword": 0, "again": 0}}, "above 0"),
                               ({"method": "sum"}, "method"), ({"window": 0}, "window")]:
            with pytest.raises(BadArgument, match=message):
                h.search("badge", **knobs)
    assert calls.n == 0


def test_with_knobs_keeps_the_index_and_checks_at_once():
    index = bm25.build_index(DOCS)
    strict = index.with_knobs(match="all")
    assert strict.postings is index.postings  # nothing rebuilt
    assert [h.id for h in strict.search("restaurant badge")] == []
    assert [h.id for h in index.search("restaurant badge")][:1] == ["d"]
    with pytest.raises(BadArgument, match="match"):
        index.with_knobs(match="most")


def test_check_hits_raises_even_under_python_minus_o():
    # The checks raise ContractBroken themselves: no bare assert, so `python -O` cannot switch them off.
    import subprocess
    import sys

    code = ("from rungs.core.contract import check_hits, ContractBroken\nfrom rungs.core.retrieval import Hit\n"
            "try:\n    check_hits([Hit(id='a', score=1.0), Hit(id='a', score=1.0)])\n"
            "except ContractBroken:\n    print('caught')\n")
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "caught"


def test_hit_reads_like_a_dict_and_flattens():
    h = Hit(id="a", score=1.5, title="T", parts={"x": 1.0, "y": 0.5}, extra={"snippet": "s"})
    assert h["id"] == "a" and h["snippet"] == "s" and h.get("nope") is None and "snippet" in h
    assert json.dumps(h.as_dict())
    check_hits([h])


#: A rule the retrieval half shares → (its one home, a mark only a copy of it would write), read from the files.
HOMES = {"the top-k cut (best first, ties by id, over arrays)": ("core/retrieval.py", r"np\.partition\("),
         "the progress bar": ("core/live.py", r"^\s*(from tqdm|import tqdm)")}


def _copies(mark: str, home: str, sources: dict) -> list[str]:
    import re

    return sorted(p for p, text in sources.items() if p != home and re.search(mark, text, re.MULTILINE))


@pytest.mark.parametrize("rule", sorted(HOMES))
def test_the_retrieval_halfs_shared_rules_are_written_once(rule):
    from pathlib import Path

    package = Path(rungs.__file__).resolve().parent
    sources = {p.relative_to(package).as_posix(): p.read_text(encoding="utf-8") for p in package.rglob("*.py")}
    home, mark = HOMES[rule]
    assert _copies(mark, "", {home: sources[home]}) == [home], f"{rule}: its home {home} no longer holds it"
    assert _copies(mark, home, sources) == [], f"{rule} is written again outside {home}"
    planted = {**sources, "engine/planted.py": "kth = np.partition(s, 3)\nfrom tqdm import tqdm\n"}
    assert "engine/planted.py" in _copies(mark, home, planted)  # a second copy would be seen
