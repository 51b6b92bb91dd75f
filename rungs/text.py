"""The one tokenizer of the collection.

Every rung that turns text into words calls ``tokenise``: BM25 (N1), the
tuning lab, the overlap checks on the questions. FTS5 (N0) has its own
tokenizer inside SQLite, ``unicode61 remove_diacritics 2``; ``tokenise`` with
no options cuts text at the same places, which is what lets N1 reproduce
FTS5's scores to the last digit.

Two decisions are yours here: whether to drop French stop words, and whether
to stem. Both shrink the vocabulary; stemming also merges words that only look
related (« mari » and « marie » share a stem, « maladie » and « malade » too).
Cost: a regular expression and a dictionary look-up per word.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Callable, Iterable

# A word is a run of letters or digits; everything else, the apostrophe of
# « l’entreprise » included, separates words (FTS5's unicode61 does the same).
WORD = re.compile(r"[^\W_]+")

# NFKD does not take ligatures apart: they are letters of their own in Unicode.
_LIGATURES = str.maketrans({"œ": "oe", "æ": "ae", "ß": "ss"})

# French stop words, accents folded: the Snowball list, plus the single letters
# an elision leaves behind (l’, d’, qu’, j’ …), so « l’entreprise » → « entreprise ».
FRENCH_STOPWORDS = frozenset("""
a ai aie aient aies ait as au aura aurai auraient aurais aurait auras aurez
auriez aurions aurons auront aux avaient avais avait avec avez aviez avions
avoir avons ayant ayez ayons c ce ceci cela ces cet cette d dans de des du
elle elles en es est et etaient etais etait etant ete etes etiez etions etre
eu eue eues eumes eurent eus eusse eussent eusses eussiez eussions eut eutes
eux fumes furent fus fusse fussent fusses fussiez fussions fut futes ici il
ils j je l la le les leur leurs lui m ma mais me meme mes moi mon n ne nos
notre nous on ont ou par pas pour qu que quel quelle quelles quels qui s sa
sans se sera serai seraient serais serait seras serez seriez serions serons
seront ses soi soient sois soit sommes son sont soyez soyons suis sur t ta te
tes toi ton tu un une vos votre vous y
""".split())


def fold(word: str) -> str:
    """Lower case, ligatures spelled out, accents removed: « Œuvre » → « oeuvre »."""
    decomposed = unicodedata.normalize("NFKD", word.lower().translate(_LIGATURES))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=1)
def _snowball() -> Callable[[str], str]:
    import snowballstemmer  # a real Snowball stemmer, pure Python, loaded on first use

    stemmer = snowballstemmer.stemmer("french")
    return lru_cache(maxsize=100_000)(stemmer.stemWord)


def _stemmer(stem) -> Callable[[str], str] | None:
    if stem is None or stem is False:
        return None
    if stem is True or stem == "snowball":
        return _snowball()
    if callable(stem):
        return stem
    raise ValueError(f"stem must be None, True, 'snowball' or a function, not {stem!r}")


def _stopset(stopwords) -> frozenset[str]:
    if stopwords is None or stopwords is False:
        return frozenset()
    if stopwords is True or stopwords == "french":
        return FRENCH_STOPWORDS
    if isinstance(stopwords, str):
        raise ValueError(f"stopwords must be None, True, 'french' or a list of words, not {stopwords!r}")
    return frozenset(fold(w) for w in stopwords)


def tokenise(text: str | None, *, stopwords=None, stem=None) -> list[str]:
    """Cut ``text`` into folded words, in order, repeats kept.

    >>> tokenise("L’Entreprise rembourse l'œuvre")
    ['l', 'entreprise', 'rembourse', 'l', 'oeuvre']
    >>> tokenise("L’Entreprise rembourse l'œuvre", stopwords=True)
    ['entreprise', 'rembourse', 'oeuvre']
    >>> tokenise("Les congés payés", stopwords=True, stem=True)
    ['conge', 'pai']

    ``stopwords``: None (keep every word), True or "french" (the list above),
    or your own list. ``stem``: None, True or "snowball" (Snowball French), or
    any function from word to stem. Stop words are checked before stemming;
    the stemmer sees the accented word (Snowball's rules need the accents)
    and its output is folded.
    """
    if not text:
        return []
    stops = _stopset(stopwords)
    stemmer = _stemmer(stem)
    words = []
    for raw in WORD.findall(text.lower()):
        folded = fold(raw)
        if folded in stops:
            continue
        word = fold(stemmer(raw)) if stemmer else folded
        # A stemmer can strip a word to nothing (Porter turns a possessive "s" into ""): not a word.
        if word:
            words.append(word)
    return words
