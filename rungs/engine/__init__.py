"""N1, the engine: how a search engine makes the same BM25 fast, and what changes past one machine.

The readable BM25 (``rungs.bm25``) and its lazy fast path (``rungs.fastbm25``)
keep counts and compute the knobs at search time. Engines do it the other way
round; the modules here do it too, each tested against the readable N1:

    impacts    eager BM25: one setting frozen into a matrix of impacts at index time (``freeze`` → ``Frozen``)
    maxscore   the same top k without scoring every matching page, written to be read, with its counters
    shards     the collection over 1, 2, 4, 8 shards: each shard's own idf, and global statistics first
    loops      the compiled inner loops (numba), the one place rungs is not plain numpy
    compiled   ``Compiled`` and ``FastEngine``: frozen impacts walked by those loops

Taught in notebook 08 (*Why search engines are fast*); measured against bm25s
and tantivy in ``benchmarks/bench_peers.py``.
"""
