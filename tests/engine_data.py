"""What the engine's tests search: the shipped handbook and CACM, and small generated collections with traps.

Each loader runs once per test process (cached): CACM is cut by ``rungs.lab.cacm.english`` (lower-case
alphanumeric, Lucene's 33 stop words, Porter), and indexed by the readable N1 with its words joined by
spaces — ``rungs.core.text.tokenise`` cuts them back unchanged, so both paths see the same words.
"""

import random
from functools import cache

from rungs import bm25
from rungs.lab import cacm as cacm_data
from rungs.lab.handbook import load_pages, load_questions


@cache
def pages():
    return load_pages()


@cache
def questions():
    """Every judged handbook question (the unanswerable ones too: their judgments are zeros)."""
    return [q for q in load_questions() if q["judged"]]


@cache
def handbook_index():
    return bm25.build_index(pages(), stopwords=True)


@cache
def cacm():
    documents, queries = cacm_data.load_documents(), cacm_data.load_queries()
    words = [cacm_data.english(d["body"]) for d in documents]
    kept = [(q, cacm_data.english(q["question"])) for q in queries]
    kept = [(q, w) for q, w in kept if w]
    docs = [{"id": d["id"], "body": " ".join(w)} for d, w in zip(documents, words)]
    return {"index": bm25.build_index(docs, fields=("body",)), "docs": docs, "words": words,
            "queries": [" ".join(w) for _, w in kept], "tokens": [w for _, w in kept],
            "judged": [{"id": q["id"], "question": " ".join(w), "relevant": q["relevant"]} for q, w in kept]}


#: CACM's reference setting (Anserini): Lucene's BM25 with k1 = 0.9, b = 0.4.
CACM_KNOBS = {**bm25.LUCENE, "k1": 0.9, "b": 0.4}


def generated(seed: int, n_docs: int = 40, vocabulary: int = 25):
    """A small collection with two fields, repeated words, empty fields and exact ties (duplicated pages)."""
    rng = random.Random(seed)
    words = [f"m{i}" for i in range(vocabulary)]
    docs = []
    for i in range(n_docs):
        title = " ".join(rng.choices(words, k=rng.randint(0, 3)))
        body = " ".join(rng.choices(words, weights=[1 / (r + 1) for r in range(vocabulary)], k=rng.randint(0, 20)))
        docs.append({"id": f"p{rng.randint(0, 10**6):07d}-{i}", "title": title or None, "body": body})
    for i in range(3):  # copies of a page under other ids: the same score, ties broken by id
        docs.append({**docs[i], "id": f"copy{i}-{docs[i]['id']}"})
    queries = [" ".join(rng.choices(words, k=rng.randint(1, 5))) for _ in range(30)]
    return docs, queries


#: The knobs the tests sweep: the presets and the corners (k1 = 0, b = 0, a field weighted 0, lossy lengths).
SETTINGS = [
    {},
    dict(bm25.LUCENE),
    dict(bm25.FTS5),
    {"k1": 0.9, "b": 0.4, "weights": {"title": 3.0}},
    {"k1": 0.0, "b": 0.0, "weights": {"title": 0.0}},
    {"lengths": "lossy", "weights": {"title": 2.5}, "repeats": "count"},
    {"match": "all", "saturation": "plain", "b": 1.0},
]
