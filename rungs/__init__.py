"""rungs: search in your own documents, one rung at a time.

Each module is one rung of the ladder (or one shared concept the rungs use):

- ``text``      the one tokenizer every rung uses
- ``handbook``  the pages and the judged questions
- ``fts``       N0, full-text search in SQLite FTS5
- ``bm25``      N1, a BM25 you can read, every score explained term by term
- ``display``   the one way a ranking is printed or plotted
- ``vectors``   N2, a multilingual encoder and its cache
- ``hybrid``    N2, reciprocal rank fusion of the keyword and vector legs
- ``llm``       the one model client (a real local server by default)
- ``rag``       N3, answers that cite the passages they were sent
- ``decide``    N4, typed decisions (probability, choice, score) and a judge that reranks
- ``research``  N5, a bounded research loop with fenced sources and checked citations
- ``evaluate``  the metrics (MRR, nDCG, recall, precision, AP)
- ``fastbm25``  N1's arithmetic as sparse matrices, for sweeps and benchmarks
- ``tuning``    splits, sweeps and their plots
- ``cacm``      a real judged English collection, to check BM25 against a published score
- ``documents`` your own folder: PDF, Word, HTML, Markdown, text read and indexed on disk, incrementally
- ``cli``       ``python -m rungs index | search | ask`` over that index
"""

__version__ = "0.1.0"
