"""One normalisation for every keyword rung: FTS5 in memory, FTS5 on disk, N1 and its fast path agree.

The same folder, the same words: every keyword rung must find the same
passages, however the words were typed — ligatures (« œuvres »), accents
composed or not (NFD), typographic apostrophes, full-width letters, « ß »,
dotless « ı », compatibility forms (« ﬁ », « ½ », « 2ᵉ »). A learner who types
« œuvres » must not find nothing with one rung and the page with another.
"""

import sqlite3
import unicodedata

import pytest

from rungs import bm25, fastbm25, fts
from rungs.core.text import fts_text, tokenise
from rungs.yours.index import index_folder

NFD = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731 - accents as separate marks, as macOS writes names

#: Each page holds one way people type a word; the queries below type it another way.
PAGES = {
    "oeuvres": "Les œuvres sociales du comité d'entreprise.",
    "soeur": "Le mariage de votre SŒUR donne droit à un jour.",
    "nfd": NFD("Les congés payés se posent avant le été."),
    "apostrophe": "L’entreprise rembourse l’abonnement.",
    "fullwidth": "Le ｗｉｆｉ des invités change chaque mois.",
    "eszett": "Die Straße ist gesperrt.",
    "dotless": "Kırmızı badge perdu.",
    "ligature": "La ﬁche de paie arrive le 28.",
    "fraction": "Une absence de ½ journée, au 2ᵉ étage.",
    "plain": "Rien de particulier ici, sauf le badge.",
}
QUERIES = ["œuvres", "oeuvres", "Œuvres", "soeur", "sœur", "conges payes", NFD("congés"), "congés",
           "entreprise", "l'entreprise", "wifi", "ｗｉｆｉ", "strasse", "straße", "kırmızı", "fiche", "ﬁche",
           "badge", "Été", "ete", "½", "1 2", "2ᵉ", "2e"]


@pytest.fixture(scope="module")
def rungs_over_one_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("folder")
    for name, text in PAGES.items():
        (folder / f"{name}.txt").write_text(f"{name}\n{text}\n", encoding="utf-8")
    on_disk = index_folder(folder, vectors=False)
    passages = on_disk.passages()
    return {"FTS5 in memory": fts.FtsIndex(passages),
            "FTS5 on disk": on_disk.retriever("fts", level="passage"),
            "BM25 (N1)": bm25.build_index(passages),
            "BM25 fast path": fastbm25.FastBM25.from_documents(passages)}


@pytest.mark.parametrize("match", ["any", "all"])
@pytest.mark.parametrize("query", QUERIES)
def test_every_keyword_rung_finds_the_same_passages(rungs_over_one_folder, query, match):
    found = {name: sorted(h.id for h in r.search(query, limit=50, match=match))
             for name, r in rungs_over_one_folder.items()}
    assert len({tuple(v) for v in found.values()}) == 1, found
    assert any(found.values()) or query == "Été"  # the words are there: something is found


def test_fts5_holds_exactly_the_words_tokenise_cuts():
    """The stored side, compared word for word: FTS5's own vocabulary against ``tokenise``."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    for text in PAGES.values():
        db.execute("INSERT INTO t(body) VALUES (?)", (fts_text(text),))
    held = {row[0] for row in db.execute("SELECT term FROM v")}
    assert held == {w for text in PAGES.values() for w in tokenise(text)}


def test_without_the_one_normalisation_fts5_would_disagree():
    # A negative control: text stored as typed (no fts_text) makes « œuvres » and « oeuvres » different words.
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    db.execute("INSERT INTO t(body) VALUES (?)", (PAGES["oeuvres"] + " " + PAGES["fullwidth"],))
    held = {row[0] for row in db.execute("SELECT term FROM v")}
    assert held != set(tokenise(PAGES["oeuvres"] + " " + PAGES["fullwidth"]))
