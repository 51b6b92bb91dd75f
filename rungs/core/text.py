"""The one tokenizer and the one normalisation of the collection.

Every rung that turns text into words calls ``tokenise``: BM25 (N1), the
tuning lab, the overlap checks on the questions. FTS5 (N0) has its own
tokenizer inside SQLite, ``unicode61 remove_diacritics 2``; every text FTS5
stores, in memory or on disk, goes through ``fts_text`` first (ligatures
spelled out, compatibility forms such as full-width letters made plain), so
that FTS5 cuts exactly the words ``tokenise`` cuts — which is what lets N1
reproduce FTS5's scores to the last digit, and N0 and N1 find the same pages
for the same words (``tests/test_keyword_rungs.py`` checks it).

Two decisions are yours here: whether to drop French stop words, and whether
to stem. Both shrink the vocabulary; stemming also merges words that only look
related (« mari » and « marie » share a stem, « maladie » and « malade » too).
Cost: a regular expression and a dictionary look-up per word.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache
from typing import Callable, Iterable

from .errors import MAX_TEXT_CHARS, BadArgument, check_text

# A word is a run of letters or digits; everything else, the apostrophe of
# « l’entreprise » included, separates words (FTS5's unicode61 does the same).
WORD = re.compile(r"[^\W_]+")

# NFKD does not take ligatures apart: they are letters of their own in Unicode.
_LIGATURES = str.maketrans({"œ": "oe", "æ": "ae", "ß": "ss"})
# The same, before case is folded: FTS5 folds case itself, and must see the letters tokenise sees.
_SPELLED = str.maketrans({"œ": "oe", "Œ": "OE", "æ": "ae", "Æ": "AE", "ß": "ss", "ẞ": "SS"})

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
    return fold_fast(check_text(word, "word"))


def fold_fast(word: str) -> str:
    # fold without the check: tokenise calls it once per word of every document.
    decomposed = unicodedata.normalize("NFKD", _capped(word.lower()))
    # Ligatures last: « ǣ » decomposes to « æ » + macron, and « æ » is then spelled « ae » like the others.
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).translate(_LIGATURES)


# ---------------------------------------------------------------- one text, however it was typed

#: French puts at most two accents on a letter; a longer run of combining marks is not writing, and
#: Unicode normalisation sorts each run, at a cost that grows with the square of its length.
MAX_MARKS = 8

# Characters a reader does not see (soft hyphen, zero-width space and joiners, word joiner, BOM,
# direction marks and embeddings): inside a word they must not cut it in two.
_INVISIBLE = dict.fromkeys([0x00AD, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0x2061,
                            0x2062, 0x2063, 0x2064, 0xFEFF, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])

# The accents that combine with a Latin letter: FTS5's unicode61 keeps them inside a word and drops them.
_LEFTOVER_ACCENTS = dict.fromkeys(range(0x0300, 0x0370))


@lru_cache(maxsize=1)
def _long_runs() -> re.Pattern:
    """A run of more than MAX_MARKS combining marks (the table is built once, on first use: 50 ms)."""
    marks = [c for c in range(sys.maxunicode + 1) if unicodedata.combining(chr(c))]
    ranges, start = [], marks[0]
    for prev, cur in zip(marks, marks[1:] + [None]):
        if cur != prev + 1:
            ranges.append(f"\\U{start:08x}-\\U{prev:08x}" if prev > start else f"\\U{start:08x}")
            start = cur
    return re.compile(f"[{''.join(ranges)}]{{{MAX_MARKS + 1},}}")


#: Below this length a text is looked at character by character: cheaper than building the table (50 ms)
#: in a process that reads only a few short texts (a search command and its snippets).
_SHORT = 4096


def _capped(text: str) -> str:
    if text.isascii():
        return text
    if len(text) < _SHORT:
        return _capped_short(text)
    return _long_runs().sub(lambda m: m.group(0)[:MAX_MARKS], text)


def _capped_short(text: str) -> str:
    """``_capped`` for a short text: each character looked at once (the same result as the table's)."""
    out, run = [], 0
    for ch in text:
        run = run + 1 if not ch.isascii() and unicodedata.combining(ch) else 0
        if run <= MAX_MARKS:
            out.append(ch)
    return "".join(out) if len(out) < len(text) else text


def nfc(text: str) -> str:
    """The text as a reader sees it: composed (« e » + accent → « é »), invisible characters removed.

    The one normalisation of the collection: ``tokenise`` and FTS5 (N0) both read text through it.
    Linear in the length of the text (runs of combining marks are cut to ``MAX_MARKS`` first).
    """
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _capped(text)).translate(_INVISIBLE)


def fts_text(text: str | None) -> str | None:
    """Text as FTS5 must store it: read through ``nfc``, compatibility forms made plain (NFKC: « ﬁ » → « fi »,
    full-width « ｃ » → « c », « ² » → « 2 »), ligatures spelled out (« œ » → « oe »). Case and accents are
    kept (FTS5 folds them itself, and a snippet shows the text as written).
    """
    if not text:
        return text
    return unicodedata.normalize("NFKC", nfc(text)).translate(_SPELLED)


def words(text: str) -> list[str]:
    """The words of a text, lower case, accents kept (FTS5 folds them itself; ``tokenise`` folds them next)."""
    return _words(check_text(text, "text"))


def _words(text: str) -> list[str]:
    # Lower case first: « İ » lowers to « i » + a combining dot, which the next step removes.
    return WORD.findall(nfc(text.lower()).translate(_LEFTOVER_ACCENTS))


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
        return _checked(stem)
    raise BadArgument(f"stem must be None, True, 'snowball' or a function, not {stem!r}"[:200])


def _checked(stem):
    def stem_word(word):
        out = stem(word)
        if not isinstance(out, str):  # a stem that is not text would reach the index as a key
            raise BadArgument(f"the stem function returned {type(out).__name__} for {word!r}, not a string")
        return out
    return stem_word


def stopset(stopwords) -> frozenset[str]:
    if stopwords is None or stopwords is False:
        return frozenset()
    if stopwords is True or stopwords == "french":
        return FRENCH_STOPWORDS
    if isinstance(stopwords, (str, bytes, dict)) or not isinstance(stopwords, Iterable):
        raise BadArgument(f"stopwords must be None, True, 'french' or a list of words, not {stopwords!r}"[:200])
    words = list(stopwords)
    bad = [w for w in words if not isinstance(w, str)]
    if bad:
        raise BadArgument(f"stopwords must be a list of strings; it holds {type(bad[0]).__name__} {bad[0]!r}"[:200])
    return frozenset(fold_fast(nfc(w)) for w in words)


def tokenise(text: str | None, *, stopwords=None, stem=None) -> list[str]:
    """Cut ``text`` into folded words, in order, repeats kept.

    >>> tokenise("L’Entreprise rembourse l'œuvre")
    ['l', 'entreprise', 'rembourse', 'l', 'oeuvre']
    >>> tokenise("L’Entreprise rembourse l'œuvre", stopwords=True)
    ['entreprise', 'rembourse', 'oeuvre']
    >>> tokenise("Les congés payés", stopwords=True, stem=True)
    ['cong', 'pai']

    ``stopwords``: None (keep every word), True or "french" (the list above),
    or your own list. ``stem``: None, True or "snowball" (Snowball French), or
    any function from word to stem. Stop words are checked before stemming;
    the stemmer sees the accented word (Snowball's rules need the accents)
    and its output is folded. The text is read through ``nfc`` first, so a
    decomposed « é » or a zero-width space inside a word changes nothing.
    """
    check_text(text, "text", max_chars=MAX_TEXT_CHARS, allow_none=True)
    stops = stopset(stopwords)  # the options are checked even when there is nothing to cut
    stemmer = _stemmer(stem)
    if not text:
        return []
    out = []
    for raw in _words(text):
        # Folding can make a separator appear (« ½ » is « 1⁄2 »): cut again, as FTS5 cuts fts_text's output.
        for piece in _pieces(raw):
            folded = fold_fast(piece)
            if folded in stops:
                continue
            word = fold_fast(stemmer(piece)) if stemmer else folded
            # A stemmer can strip a word to nothing (Porter turns a possessive "s" into ""): not a word.
            if word:
                out.append(word)
    return out


def _pieces(raw: str) -> tuple[str, ...]:
    if raw.isascii():
        return (raw,)
    return _plain_pieces(raw)


@lru_cache(maxsize=100_000)
def _plain_pieces(raw: str) -> tuple[str, ...]:
    # Words repeat: each distinct non-ASCII word is normalised once.
    plain = unicodedata.normalize("NFKC", raw)
    return tuple(WORD.findall(plain.translate(_LEFTOVER_ACCENTS))) if plain != raw else (raw,)
