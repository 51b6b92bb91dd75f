"""CACM: a real, judged English test collection, to check our BM25 against a published score.

3,204 abstracts from Communications of the ACM, 64 queries, 796 judgments,
as shipped by the Anserini toolkit (see ``shared/data/cacm/README.md``). The
published reference: Lucene BM25 (k1 = 0.9, b = 0.4), Porter stemming,
Lucene's English stop words, MAP 0.3123.

The data is external test data, not part of the package: it is looked for in
``$RUNGS_CACM`` or ``../shared/data/cacm`` next to the repository; when it is
not there, ``CacmNotFound`` says so and the tuning lab skips that section.

Cost: reading a 0.8 MB archive and tokenising 3,204 short texts, about a second.
"""

from __future__ import annotations

import html
import os
import re
import tarfile
from functools import lru_cache
from pathlib import Path

from .errors import RungsError

#: Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), the 33 Anserini uses.
LUCENE_STOPWORDS = frozenset("""a an and are as at be but by for if in into is it no not of on or such that the
their then there these they this to was will with""".split())


class CacmNotFound(RungsError, FileNotFoundError):
    """The CACM files are not on this machine; the message says where they were looked for."""


def find(path: str | Path | None = None) -> Path:
    candidates = [Path(path)] if path else []
    if os.environ.get("RUNGS_CACM"):
        candidates.append(Path(os.environ["RUNGS_CACM"]))
    candidates.append(Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cacm")
    for folder in candidates:
        if (folder / "cacm.tar.gz").exists():
            return folder
    raise CacmNotFound("CACM not found (looked in $RUNGS_CACM and ../shared/data/cacm next to the repository); "
                       "set RUNGS_CACM to the folder holding cacm.tar.gz, topics.cacm.txt and qrels.cacm.txt")


@lru_cache(maxsize=1)
def _porter():
    import Stemmer  # PyStemmer: the Snowball project's C implementation of Porter's algorithm

    return Stemmer.Stemmer("porter").stemWord


def english(text: str) -> list[str]:
    """Anserini's English analysis, approximated: lower-case letters and digits, Lucene's stop words, Porter."""
    from .text import tokenise

    return tokenise(text, stopwords=LUCENE_STOPWORDS, stem=_porter())


def load_documents(path=None) -> list[dict]:
    """The 3,204 documents: ``id`` (CACM-NNNN) and ``body`` (the whole text, as Anserini indexes it)."""
    docs = []
    with tarfile.open(find(path) / "cacm.tar.gz") as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            if not member.isfile():
                continue
            raw = archive.extractfile(member).read().decode("utf-8", errors="replace")
            text = html.unescape(re.sub(r"<[^>]+>", " ", raw))
            docs.append({"id": Path(member.name).stem, "title": "", "body": text})
    return docs


def load_queries(path=None) -> list[dict]:
    """The 64 queries with their judgments (``relevant``: doc id → 1); 12 have none."""
    folder = find(path)
    text = (folder / "topics.cacm.txt").read_text(encoding="utf-8")
    queries = [{"id": m.group(1), "question": " ".join(m.group(2).split()), "relevant": {}}
               for m in re.finditer(r"<DOCNO>\s*(\d+)\s*</DOCNO>(.*?)</DOC>", text, flags=re.S)]
    by_id = {q["id"]: q for q in queries}
    for line in (folder / "qrels.cacm.txt").read_text().splitlines():
        qid, _, doc, grade = line.split()
        if qid in by_id and int(grade) > 0:
            by_id[qid]["relevant"][doc] = int(grade)
    return queries
