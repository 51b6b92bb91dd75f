"""rungs: search in your own documents, one rung at a time.

The ladder, one module a rung, at the top of the package::

    N0   fts        full-text search in SQLite FTS5: an index for free, bm25(), snippets
    N1   bm25       a BM25 you can read, every score explained word by word
         fastbm25   N1's arithmetic as sparse matrices, for sweeps (equal to bm25 to 1e-9)
         feedback   RM3: the query widened by the words of its first hits (pseudo-relevance feedback)
         passages   long documents cut into passages, and rolled up again to documents
         engine/    N1 as an engine computes it: frozen impacts, MaxScore, shards, compiled loops
    N2   vectors    a multilingual sentence encoder and its cache: « vacances » finds « congés payés »
         hybrid     reciprocal rank fusion of any legs, its constant k
    N3   rag/       answers that cite the passages they were sent, with quotes and figures checked,
                    or « je ne sais pas »
    N4   decide     typed decisions (a probability, a choice, a score), strictly validated
         rerank     a model's judgement of each first-stage page, as a retriever
    N5   research/  a bounded research loop whose sources cannot forge citations

The rooms below it::

    core     the ground floor, imports nothing above it: errors, text (the one tokenizer and
             normalisation), documents, retrieval (Hit, Retriever), contract, replies, claims,
             figures, display, paths (every path and RUNGS_* setting), secrets
    model    everything between a rung and a chat model: the client, the teaching prop, the
             bundled model, the shared local server, the room server
    lab      measuring: the handbook and CACM (shipped as package data), metrics, the answer
             mark, judges, questions, tuning
    yours    your own folder: readers for each format, the index on disk
    tools    the command line, the doctor, the workshop, the export to Elasticsearch / OpenSearch, the book

``python -m rungs`` lists the commands. The README's « Architecture » section
says what each room may import, and a test keeps it so.
"""

__version__ = "0.1.0"
