"""Exercises of notebook 00 (N0 · full-text search in SQLite FTS5).

Every check recomputes its truth with SQLite itself (a tiny FTS5 table, or
``rungs.fts.FtsIndex`` over the handbook): nothing here is a stored number.
"""

from __future__ import annotations

import math
import sqlite3
from functools import lru_cache

from . import Exercise, ExerciseBroken


@lru_cache(maxsize=1)
def _index():
    from ..fts import FtsIndex
    from ..lab.handbook import load_pages

    return FtsIndex(load_pages())


def _ids(query: str, **knobs) -> list[str]:
    return [h.id for h in _index().search(query, limit=100, **knobs)]


# ---------------------------------------------------------------- tokenizer

#: Two rows and two queries: a single accent (« congés ») and a letter with two (« ễ » of « Nguyễn »).
TINY_ROWS = ("Congés payés", "Mme Nguyễn, service RH")
TINY_QUERIES = {"conges": "Congés payés", "nguyen": "Mme Nguyễn, service RH"}


def tiny_matches(tokenize: str) -> dict[str, int]:
    """How many rows of a two-row FTS5 table each unaccented query finds, with this ``tokenize`` option."""
    db = sqlite3.connect(":memory:")
    try:
        option = tokenize.replace("'", "''")  # the option is SQL text: a quote must stay inside it
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{option}')")
        db.executemany("INSERT INTO t(body) VALUES (?)", [(r,) for r in TINY_ROWS])
        return {q: db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (f'"{q}"',)).fetchone()[0]
                for q in TINY_QUERIES}
    finally:
        db.close()


def _judge_tokenizer(answer):
    if not isinstance(answer, str) or not answer.strip():
        return False, "answer with the text of a tokenize option, e.g. 'unicode61 …'"
    try:
        found = tiny_matches(answer)
    except sqlite3.Error as err:
        return False, f"SQLite refused this tokenizer ({err})"
    missed = [q for q, n in found.items() if n == 0]
    if not missed:
        return True, (f"with tokenize = '{answer}', « conges » finds « Congés » and « nguyen » finds « Nguyễn »: "
                      "the second needs a letter with two accents folded")
    verb = "finds" if len(missed) == 1 else "find"
    return False, f"with tokenize = '{answer}', {' and '.join(f'« {q} »' for q in missed)} still {verb} nothing"


def _solution_tokenizer():
    for option in ("unicode61", "unicode61 remove_diacritics 1", "unicode61 remove_diacritics 2"):
        if all(tiny_matches(option).values()):
            return option
    raise ExerciseBroken("no unicode61 option folds both words")


# ---------------------------------------------------------------- the word to blame

BLAME_QUERY = "mutuelle lunettes"  # English: complementary health insurance, glasses


def _judge_blame(answer):
    from ..fts import words

    if not isinstance(answer, str) or len(words(answer)) != 1:
        return False, "answer with one word of the query"
    word = words(answer)[0]
    query_words = words(BLAME_QUERY)
    if word not in query_words:
        return False, f"« {answer} » is not a word of « {BLAME_QUERY} »"
    rest = " ".join(w for w in query_words if w != word)
    if _ids(BLAME_QUERY, match="all"):
        return False, "the full query finds pages now: the handbook changed, re-run the notebook"
    if _ids(rest, match="all"):
        return True, (f"without « {word} », match='all' finds {_ids(rest, match='all')}: no page holds « {word} ». "
                      "Read that page: which word does it use instead?")
    return False, f"without « {word} », match='all' still finds nothing: the other word is not the culprit"


def _solution_blame():
    from ..fts import words

    for word in words(BLAME_QUERY):
        if _judge_blame(word)[0]:
            return word
    raise ExerciseBroken("no single word is to blame")


# ---------------------------------------------------------------- a title weight

WEIGHT_QUESTION = "Dans quel délai déposer une note de frais ?"  # English: how soon must an expense claim be filed?
WEIGHT_WINNER, WEIGHT_LOSER = "notes-de-frais", "faq-cse"


def _judge_weight(answer):
    if isinstance(answer, bool) or not isinstance(answer, (int, float)) or not math.isfinite(answer) \
            or not 0 <= answer <= 1000:
        return False, "answer with a number between 0 and 1000: the title's weight (the body keeps 1.0)"
    ids = _ids(WEIGHT_QUESTION, weights={"title": float(answer), "body": 1.0})
    rank = {page: (ids.index(page) + 1 if page in ids else None) for page in (WEIGHT_WINNER, WEIGHT_LOSER)}
    if rank[WEIGHT_WINNER] is not None and (rank[WEIGHT_LOSER] is None or rank[WEIGHT_WINNER] < rank[WEIGHT_LOSER]):
        return True, (f"title weight {answer}: {WEIGHT_WINNER} ranks {rank[WEIGHT_WINNER]}, "
                      f"{WEIGHT_LOSER} {rank[WEIGHT_LOSER]}")
    return False, (f"title weight {answer}: {WEIGHT_WINNER} ranks {rank[WEIGHT_WINNER]}, "
                   f"still below {WEIGHT_LOSER} (rank {rank[WEIGHT_LOSER]})")


def _solution_weight():
    for weight in (1.0, 1.5, 2.0, 3.0, 5.0, 10.0):
        if _judge_weight(weight)[0]:
            return weight
    raise ExerciseBroken("no title weight lifts the page")


# ---------------------------------------------------------------- the title alone

TITLE_QUERY = "congés"  # English: leave (time off)


def _title_only_truth() -> set[str]:
    return {h.id for h in _index().search(TITLE_QUERY, limit=100, weights={"title": 1.0, "body": 0.0})
            if h.score > 0}


def _judge_title_only(answer):
    if not isinstance(answer, (list, tuple, set)) or not all(isinstance(a, str) for a in answer):
        return False, "answer with a list of page ids, e.g. ['conges-payes', …]"
    given, truth = set(answer), _title_only_truth()
    if given == truth:
        return True, (f"{len(truth)} pages: only the ones whose title holds « congés » exactly "
                      "(« Congé sans solde » is singular: another word to FTS5)")
    extra, missing = sorted(given - truth), len(truth - given)
    parts = []
    if extra:
        parts.append(f"{extra} score 0 with the body weighted 0")
    if missing:
        parts.append(f"{missing} page(s) with a score above 0 are missing")
    return False, "; ".join(parts)


# ---------------------------------------------------------------- the sign of bm25()

SIGN_QUERY = "congés payés"


def _top_score() -> float:
    return _index().search(SIGN_QUERY, limit=1)[0].score


def _judge_sign(answer):
    from . import as_number

    x, truth = as_number(answer, "a score"), _top_score()
    if math.isclose(x, truth, abs_tol=5e-4):
        return True, f"{truth:.3f}: index.search returns −bm25(), so the best page has the largest score"
    if math.isclose(x, -truth, abs_tol=5e-4):
        return False, "that is bm25()'s own number: index.search flips its sign (higher is better)"
    return False, f"{x:g} is not the first page's score for « {SIGN_QUERY} » (to 3 decimals)"


# ---------------------------------------------------------------- syntax, or words

def _judge_not_syntax(answer):
    from ..fts import FtsSyntaxError

    if not isinstance(answer, str) or not answer.strip():
        return False, "answer with a query, as text"
    try:
        _index().raw_search(answer, limit=5)
    except FtsSyntaxError:
        pass
    except Exception as err:  # noqa: BLE001 - any other refusal is not a syntax error
        return False, f"raw_search refused it, but not as FTS5 syntax ({type(err).__name__})"
    else:
        return False, f"FTS5 reads « {answer} » as a valid query: it is not a syntax error"
    found = _index().search(answer, limit=5)
    if not found:
        return False, "FTS5 refuses it, and index.search finds nothing either: pick words the handbook holds"
    return True, (f"FTS5 refuses « {answer} »; index.search quotes every word and finds "
                  f"{[h.id for h in found][:3]}")


EXERCISES = {
    "sign": Exercise(
        name="sign",
        question=f"What score does index.search give the best page for « {SIGN_QUERY} » (3 decimals)?",
        judge=_judge_sign,
        hint_text="bm25() is negative, lower is better; index.search returns score = −bm25().",
        solution_code="""
answer = round(index.search("congés payés", limit=1)[0].score, 3)""",
        solution_value=lambda: round(_top_score(), 3),
        wrong_answers=[lambda: -round(_top_score(), 3), 0.0, 1.0],
    ),
    "not_syntax": Exercise(
        name="not_syntax",
        question="Write a question FTS5 refuses as syntax, but that index.search answers with pages.",
        judge=_judge_not_syntax,
        hint_text="A stray quote, a hyphen between words, or NEAR( without its closing bracket — around words the "
                  "handbook holds.",
        solution_code="""
answer = 'badge "perdu'   # a quote FTS5 waits for forever; index.search quotes both words itself""",
        solution_value=lambda: 'badge "perdu',
        wrong_answers=["badge perdu", "congés OR payés", 'zzz "qqq'],
    ),
    "tokenizer": Exercise(
        name="tokenizer",
        question="Which tokenize option makes « conges » find « Congés » and « nguyen » find « Nguyễn »?",
        judge=_judge_tokenizer,
        hint_text="Try the four options of the table in section 7 on both rows; « ễ » carries two accents at once.",
        solution_code="""
answer = "unicode61 remove_diacritics 2"
# remove_diacritics 1 (unicode61's default) folds « é » but not a letter with two accents, like « ễ »;
# 2 folds every Latin accent. rungs.fts builds its index with it.""",
        solution_value=_solution_tokenizer,
        wrong_answers=["unicode61", "unicode61 remove_diacritics 1", "unicode61 remove_diacritics 0"],
    ),
    "blame": Exercise(
        name="blame",
        question=f"« {BLAME_QUERY} » finds nothing with match='all'. Which word is to blame?",
        judge=_judge_blame,
        hint_text="Search each word alone with match='all' (or read the one page match='any' finds).",
        solution_code="""
for word in ["mutuelle", "lunettes"]:
    print(word, [h.id for h in index.search(word, match="all")])
answer = "lunettes"   # no page says « lunettes » (glasses); the page Mutuelle says « optique » (optical)""",
        solution_value=_solution_blame,
        wrong_answers=["mutuelle", "optique"],
    ),
    "title_weight": Exercise(
        name="title_weight",
        question=(f"For « {WEIGHT_QUESTION} », find a title weight at which {WEIGHT_WINNER} "
                  f"overtakes {WEIGHT_LOSER} (body weight 1.0)."),
        judge=_judge_weight,
        hint_text="The title « Notes de frais » (expense reports) shares « de » and « frais » with the question; "
                  "faq-cse's title shares none of its words. Raise the title weight in steps and watch the two pages.",
        solution_code="""
question = "Dans quel délai déposer une note de frais ?"
for w in [1, 1.5, 2, 3]:
    print(w, [h.id for h in index.search(question, weights={"title": w, "body": 1.0})][:2])
answer = 2.0   # 1.5 is already enough; 1.0, the default, is not""",
        solution_value=_solution_weight,
        wrong_answers=[1.0, 0.5, 0.0],
    ),
    "title_only": Exercise(
        name="title_only",
        question=f"With the body's weight at 0, which pages still score above 0 for « {TITLE_QUERY} »?",
        judge=_judge_title_only,
        hint_text="Search with weights={'title': 1.0, 'body': 0.0} and limit=100; a page matched only in its body "
                  "is still returned, with a score of 0.",
        solution_code="""
hits = index.search("congés", limit=100, weights={"title": 1.0, "body": 0.0})
answer = [h.id for h in hits if h.score > 0]""",
        solution_value=lambda: sorted(_title_only_truth()),
        wrong_answers=[["conges-payes"], ["conges-payes", "conges-evenements-familiaux", "conge-sans-solde"],
                       ["conges-payes", "conges-evenements-familiaux", "compte-epargne-temps"]],
    ),
}
