"""CACM: a real, judged English test collection, to check our BM25 against a published score.

3,204 abstracts from Communications of the ACM, 64 queries, 796 judgments,
as shipped by the Anserini toolkit; it travels inside the package
(``rungs/lab/data/cacm/``, 0.8 MB; its README gives the source and the terms).
The published reference: Lucene BM25 (k1 = 0.9, b = 0.4), Porter stemming,
Lucene's English stop words, MAP 0.3123. ``$RUNGS_CACM`` points at another
copy if you have one.

Cost: reading a 0.8 MB archive and tokenising 3,204 short texts, about a second.
"""

from __future__ import annotations

import html
import os
import re
import tarfile
from functools import lru_cache
from pathlib import Path

from ..core import paths
from ..core.errors import BadArgument, RungsError, short_repr

#: Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), the 33 Anserini uses.
LUCENE_STOPWORDS = frozenset("""a an and are as at be but by for if in into is it no not of on or such that the
their then there these they this to was will with""".split())


class CacmNotFound(RungsError, FileNotFoundError):
    """The CACM files are not on this machine; the message says where they were looked for."""


def find(path: str | Path | None = None) -> Path:
    """The folder holding CACM: ``path`` if given, else ``$RUNGS_CACM``, else the copy shipped with rungs."""
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise BadArgument(f"path must be a folder's path, not {type(path).__name__} {short_repr(path)}")
    chosen = path or paths.setting_text("RUNGS_CACM")
    folder = Path(chosen) if chosen else paths.data("cacm")
    try:
        found = (folder / "cacm.tar.gz").is_file()
    except OSError:  # a name the system refuses (too long)
        found = False
    if not found:
        raise CacmNotFound(f"CACM not found in {folder}: give the folder holding cacm.tar.gz, topics.cacm.txt "
                           "and qrels.cacm.txt (or unset RUNGS_CACM to use the copy shipped with rungs)")
    return folder


@lru_cache(maxsize=1)
def _porter():
    import Stemmer  # PyStemmer: the Snowball project's C implementation of Porter's algorithm

    return Stemmer.Stemmer("porter").stemWord


def english(text: str) -> list[str]:
    """Anserini's English analysis, approximated: lower-case letters and digits, Lucene's stop words, Porter."""
    from ..core.text import tokenise

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
