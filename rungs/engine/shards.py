"""Past one machine: the collection split over shards, each scoring with its own statistics — and the fix.

What it is for: the third lesson of notebook 08 (*Past one machine*). An engine that outgrows one
machine splits its index into shards (each page lives on one shard, chosen
from its id), sends every query to every shard, and merges the shards' top k.
BM25's idf and average length are then *per shard*: a word rare on one shard
and common on another weighs differently on each, so the same query ranks
differently on 1 shard and on 8. Elasticsearch's default search type
(``query_then_fetch``) scores this way; ``dfs_query_then_fetch`` first asks
every shard for its statistics (pages, holders of each query word, total
lengths), adds them up, and lets every shard score with the global ones —
the one-machine ranking again, exactly (``search(..., stats="global")``;
asserted in the tests and in ``compare``). Vespa's ``significance`` and
OpenSearch's ``dfs_query_then_fetch`` are the same idea.

Replicas against shards. A *shard* holds a part of the collection: more shards
mean a bigger collection fits, and each query's work is spread over machines —
but every query still visits every shard, waits for the slowest, and pays the
merge; shards do not multiply queries per second. A *replica* is a full copy
of a shard: more replicas multiply the queries per second (each query goes to
one copy) and survive a machine failing, but do not let a bigger collection
fit. The room server measured in ``benchmarks/results/room.json`` (one model,
one request at a time: 5.5, 5.3 and 5.8 answers a minute with 1, 4 and 8
learners; the median wait 11 s, 45 s, 81 s) is the replica case: its queue grows with the room,
and only more copies (replicas) shorten it — splitting the work per request
(shards) would not raise the answers per minute.

What it costs: every shard builds its own counts (the same total as one
index); a query costs one search per shard plus a merge of S × k hits; global
statistics cost one more round trip (here: one pass over the shards' holder
counts, done once per collection, not per query: the statistics of a static
collection do not change between queries).

What it teaches: distributed ranking is not « the same engine, bigger »: a
statistic that was one number becomes S numbers, and an exact answer needs
them gathered first.
"""

from __future__ import annotations

import zlib

from ..core.documents import check_documents
from ..core.errors import BadArgument, RungsError, check_choice, check_int
from ..core.retrieval import Hit, Retriever, ordered
from ..fastbm25 import FastBM25

from . import impacts as eager


def shard_of(doc_id, n_shards: int) -> int:
    """The shard a page lives on: a checksum of its id (Python's ``hash`` changes per process: not this)."""
    return zlib.crc32(str(doc_id).encode("utf-8")) % n_shards


def split(documents: list[dict], n_shards: int) -> list[list[dict]]:
    """The documents dealt to ``n_shards`` shards by the checksum of their id (deterministic, order kept)."""
    n_shards = check_int(n_shards, "n_shards", low=1, high=1024)
    documents = check_documents(documents, tokens=True)  # a page without an id has no shard: named, not a KeyError
    parts: list[list[dict]] = [[] for _ in range(n_shards)]
    for doc in documents:
        parts[shard_of(doc["id"], n_shards)].append(doc)
    return parts


class Sharded(Retriever):
    """One collection over ``n_shards`` shards, frozen with one setting: a retriever like every other.

    Knobs: ``stats`` (``"local"``: every shard scores with its own statistics, as Elasticsearch's
    ``query_then_fetch``; ``"global"``: with the statistics gathered from every shard first,
    ``dfs_query_then_fetch``) and ``match``. A search asks every shard for its top ``limit`` and merges them,
    best first, ties by id — as one index would order them.
    """

    name = "BM25 over shards"
    defaults = {"stats": "local", "match": "any"}

    def __init__(self, documents: list[dict], n_shards: int, *, fields=("title", "body"), stopwords=None,
                 stem=None, **setting):
        super().__init__()
        parts = [p for p in split(documents, n_shards) if p]  # a shard with no page takes no part
        self.n_shards = check_int(n_shards, "n_shards", low=1, high=1024)
        self.counts = [eager.as_counts(FastBM25.from_documents(p, fields=fields, stopwords=stopwords, stem=stem))
                       for p in parts]
        # « dfs »: every shard's statistics added up (pages, holders per word, words per field).
        self.global_stats = eager.Stats.merge([c.stats for c in self.counts])
        self.local = [eager.freeze(c, **setting) for c in self.counts]
        self.dfs = [eager.freeze(c, **setting, stats=self.global_stats) for c in self.counts]
        self.sizes = [len(c.ids) for c in self.counts]

    def check_knobs(self, knobs: dict) -> dict:
        return {"stats": check_choice(knobs["stats"], "stats", ("local", "global")),
                "match": check_choice(knobs["match"], "match", ("any", "all"))}

    def _search(self, query, limit, knobs):
        merged = []
        for shard in self.local if knobs["stats"] == "local" else self.dfs:
            merged.extend(shard.search(query, limit=limit, match=knobs["match"], explain=False))
        return ordered(merged)[:limit]


def compare(documents, questions, *, shard_counts=(1, 2, 4, 8), limit=10, fields=("title", "body"),
            stopwords=None, stem=None, **setting) -> list[dict]:
    """For each number of shards: how many top-``limit`` rankings change against one machine, and the rankings.

    ``questions``: dicts with an ``id`` and a ``question`` (the handbook's and
    CACM's loaders give them). Each row holds the counts and, per question id,
    the ids ranked by one machine, by the shards with their own statistics
    (``local``) and with global ones (``global``): what ``rungs.lab.metrics``
    scores. Raises ``GlobalStatsMismatch`` if global statistics do not give
    back the one-machine ranking exactly (the same ids, the same floats).
    """
    if not shard_counts or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in shard_counts):
        raise BadArgument(f"shard_counts must be whole numbers ≥ 1, like (1, 2, 4, 8), not {shard_counts!r}")
    questions = _checked_questions(questions)
    one = eager.freeze(FastBM25.from_documents(documents, fields=fields, stopwords=stopwords, stem=stem), **setting)
    reference = {q["id"]: one.search(q["question"], limit=limit, explain=False) for q in questions}
    rows = []
    for n in shard_counts:
        sharded = Sharded(documents, n, fields=fields, stopwords=stopwords, stem=stem, **setting)
        local = {q["id"]: sharded.search(q["question"], limit=limit) for q in questions}
        glob = {q["id"]: sharded.search(q["question"], limit=limit, stats="global") for q in questions}
        for q in questions:
            if not _identical(glob[q["id"]], reference[q["id"]]):
                raise GlobalStatsMismatch(f"{n} shards with global statistics rank {q['question']!r} differently "
                                          "from one machine: the statistics were not gathered from every shard")
        one_ids, local_ids = _ids(reference), _ids(local)
        rows.append({
            "shards": n, "pages_per_shard": sharded.sizes, "questions": len(questions),
            "order_changed": sum(local_ids[i] != one_ids[i] for i in one_ids),
            "set_changed": sum(set(local_ids[i]) != set(one_ids[i]) for i in one_ids),
            "first_changed": sum(local_ids[i][:1] != one_ids[i][:1] for i in one_ids),
            "one": one_ids, "local": local_ids, "global": _ids(glob),
        })
    return rows


class GlobalStatsMismatch(RungsError, AssertionError):
    """Global statistics did not restore the one-machine ranking: a bug in gathering or in scoring."""


def _checked_questions(questions) -> list[dict]:
    if isinstance(questions, (str, bytes, dict)) or not hasattr(questions, "__iter__"):
        raise BadArgument(f"questions must be a list of dicts with 'id' and 'question', not {type(questions).__name__}")
    questions = list(questions)
    for i, q in enumerate(questions):
        if not isinstance(q, dict) or not isinstance(q.get("id"), str) or not isinstance(q.get("question"), str):
            raise BadArgument(f"questions[{i}] must be a dict with a text 'id' and 'question' (see load_questions)")
    return questions


def _ids(run: dict) -> dict:
    """question id → the ids ranked, best first (what ``rungs.lab.metrics`` reads)."""
    return {qid: [h.id for h in hits] for qid, hits in run.items()}


def _identical(a: list[Hit], b: list[Hit]) -> bool:
    # Exactly: the same ids, the same floats (the same statistics give the same arithmetic).
    return [(h.id, h.score) for h in a] == [(h.id, h.score) for h in b]
