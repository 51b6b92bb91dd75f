"""Exercises of notebook 01 (N1 · a BM25 you can read).

Every check recomputes its truth with ``rungs.bm25`` over the handbook (the
same index the notebook builds): nothing here is a stored number.
"""

from __future__ import annotations

import math
from functools import lru_cache

from . import Exercise, ExerciseBroken

BADGE = "Que faire si j'ai perdu mon badge ?"  # English: what should I do if I have lost my badge?


@lru_cache(maxsize=None)
def _index(stopwords: bool = False):
    from ..bm25 import build_index
    from ..lab.handbook import load_pages

    return build_index(load_pages(), stopwords=stopwords or None)


def _hit(query: str, page: str, **knobs):
    for h in _index().search(query, limit=100, **knobs):
        if h.id == page:
            return h
    return None


def _rank(ids: list[str], page: str) -> int | None:
    return ids.index(page) + 1 if page in ids else None


def _number(answer) -> bool:
    return not isinstance(answer, bool) and isinstance(answer, (int, float)) and math.isfinite(answer)


# ---------------------------------------------------------------- one contribution by hand

HAND = {"word": "perdu", "page": "pointage", "k1": 2.0, "b": 0.5}


def _hand_truth() -> float:
    hit = _hit(BADGE, HAND["page"], k1=HAND["k1"], b=HAND["b"])
    return hit.parts[HAND["word"]]


def _judge_hand(answer):
    if not _number(answer):
        return False, "answer with a number: the contribution of « perdu », e.g. 3.141"
    truth = _hand_truth()
    if abs(answer - truth) <= 5e-3:
        return True, f"that is what index.search gives for « perdu » on pointage at k1 = 2.0, b = 0.5 ({truth:.3f})"
    default = _hit(BADGE, HAND["page"]).parts[HAND["word"]]
    if abs(answer - default) <= 5e-3:
        return False, "that is the contribution at the default k1 = 1.2, b = 0.75: use k1 = 2.0 and b = 0.5"
    return False, "not the contribution at k1 = 2.0, b = 0.5; check f, |D| and avgdl against section 2's cell"


def _solution_hand() -> float:
    from ..bm25 import idf

    index = _index()
    n_with = len(index.postings[HAND["word"]])
    f = sum(index.postings[HAND["word"]][HAND["page"]].values())       # weights 1.0: title and body counted alike
    dl = sum(index.lengths[HAND["page"]].values())
    avgdl = sum(sum(fields.values()) for fields in index.lengths.values()) / index.n_docs
    k1, b = HAND["k1"], HAND["b"]
    return idf(index.n_docs, n_with) * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl))


# ---------------------------------------------------------------- k1 = 0

def _k1_zero_truth() -> float:
    return _hit(BADGE, "cpf", k1=0.0).score


def _judge_k1_zero(answer):
    if not _number(answer):
        return False, "answer with a number: cpf's score at k1 = 0"
    truth = _k1_zero_truth()
    if abs(answer - truth) <= 5e-3:
        return True, (f"{truth:.3f}: at k1 = 0 each word the page holds gives its idf, once, "
                      "whatever its count and whatever the page's length (b no longer matters)")
    if abs(answer - _hit(BADGE, "cpf").score) <= 5e-3:
        return False, "that is cpf's score at the default k1 = 1.2"
    return False, "not cpf's score at k1 = 0: which of the question's words does cpf hold? (index.explain)"


def _solution_k1_zero() -> float:
    from ..bm25 import idf

    index = _index()
    held = [w for w in index.query_words(BADGE) if "cpf" in index.postings.get(w, {})]
    return sum(idf(index.n_docs, len(index.postings[w])) for w in held)


def _all_idfs() -> float:
    from ..bm25 import idf

    index = _index()
    return sum(idf(index.n_docs, len(index.postings.get(w, {}))) for w in index.query_words(BADGE))


# ---------------------------------------------------------------- b: the long page's last chance

B_PAGE, B_TOP = "reglement-interieur", 3


def _in_top(b: float) -> bool:
    ids = [h.id for h in _index().search(BADGE, limit=B_TOP, b=b)]
    return B_PAGE in ids


def _judge_b(answer):
    if not _number(answer) or not 0 <= answer <= 1:
        return False, "answer with a b between 0 and 1, in steps of 0.05"
    steps = answer / 0.05
    if abs(steps - round(steps)) > 1e-6:
        return False, f"{answer} is not a multiple of 0.05"
    b = round(steps) * 0.05
    if not _in_top(b):
        return False, f"at b = {b:.2f} the règlement intérieur is not in the top {B_TOP}"
    if b + 0.05 <= 1 + 1e-9 and _in_top(b + 0.05):
        return False, f"at b = {b:.2f} it is in the top {B_TOP}, but it still is at b = {b + 0.05:.2f}: go higher"
    return True, f"at b = {b:.2f} it is in the top {B_TOP}, at b = {b + 0.05:.2f} it is not"


def _solution_b() -> float:
    for step in range(20, -1, -1):
        if _in_top(step * 0.05):
            return round(step * 0.05, 2)
    raise ExerciseBroken("the page is never in the top 3")


# ---------------------------------------------------------------- a title weight

WEIGHT_QUESTION = "Combien coûte un repas au restaurant d'entreprise ?"  # English: how much does a staff-restaurant meal cost?
WEIGHT_WINNER, WEIGHT_LOSER = "restaurant-entreprise", "titres-restaurant"


def _judge_weight(answer):
    if not _number(answer) or not 0 <= answer <= 1000:
        return False, "answer with a number between 0 and 1000: the title's weight (the body keeps 1.0)"
    ids = [h.id for h in _index().search(WEIGHT_QUESTION, limit=100, weights={"title": float(answer), "body": 1.0})]
    win, lose = _rank(ids, WEIGHT_WINNER), _rank(ids, WEIGHT_LOSER)
    if win is not None and (lose is None or win < lose):
        return True, f"title weight {answer}: {WEIGHT_WINNER} ranks {win}, {WEIGHT_LOSER} {lose}"
    return False, f"title weight {answer}: {WEIGHT_WINNER} ranks {win}, still below {WEIGHT_LOSER} (rank {lose})"


def _solution_weight() -> float:
    for weight in range(1, 21):
        if _judge_weight(float(weight))[0]:
            return float(weight)
    raise ExerciseBroken("no title weight up to 20 lifts the page")


# ---------------------------------------------------------------- match="all" that still works

def _questions():
    from ..lab.handbook import load_questions

    return {q["id"]: q for q in load_questions()}


def _judge_all(answer):
    if not isinstance(answer, str):
        return False, "answer with a question id, like 'q001'"
    q = _questions().get(answer.strip())
    if q is None:
        return False, f"{answer!r} is not a question id of handbook/questions.jsonl"
    best = [page for page, grade in q["judged"].items() if grade == 2]
    if not best:
        return False, f"{q['id']} has no page that answers it (an unanswerable question): pick another"
    index = _index()  # the core's index: every word counts, « de » and « que » included
    ids = [h.id for h in index.search(q["question"], match="all")]
    if any(page in ids for page in best):
        return True, (f"{q['id']}: every word of it is on {[p for p in best if p in ids][0]}, "
                      "which match='all' keeps in the top 5")
    missing = [w for w in index.query_words(q["question"])
               if not any(page in index.postings.get(w, {}) for page in best)]
    return False, (f"{q['id']}: with match='all' its page is not in the top 5 "
                   f"({len(missing)} word{'s' if len(missing) != 1 else ''} of the question missing from it)")


def _solution_all() -> str:
    for qid in _questions():
        if _judge_all(qid)[0]:
            return qid
    raise ExerciseBroken("no question keeps its page under match='all'")


# ---------------------------------------------------------------- a stemmer's false friends

SHOWN = {frozenset({"cours", "courir"}), frozenset({"malade", "maladie"})}
ENDINGS = ("", "s", "x", "e", "es")  # a plural or a feminine: the same word, not a false friend


def _judge_stems(answer):
    from ..core.text import tokenise

    if not isinstance(answer, (list, tuple)) or len(answer) != 2 or not all(isinstance(w, str) for w in answer):
        return False, "answer with a pair of words, like ('mot', 'motte')"
    cut = [tokenise(w) for w in answer]
    if any(len(c) != 1 for c in cut):
        return False, "each of the two must be one word"
    a, b = (c[0] for c in cut)
    if frozenset({a, b}) in SHOWN:
        return False, "that pair is the notebook's own example: find another"
    if any(a + e == b or b + e == a for e in ENDINGS):
        return False, f"« {answer[0]} » and « {answer[1]} » are one word (plural or feminine): merging them is right"
    stems = [tokenise(w, stem=True) for w in answer]
    if stems[0] != stems[1]:
        return False, f"the stemmer keeps them apart: « {stems[0][0]} » and « {stems[1][0]} »"
    return True, (f"both become « {stems[0][0]} »; whether they mean different things is yours to judge "
                  f"(a search for one now finds pages about the other)")


EXERCISES = {
    "by_hand": Exercise(
        name="by_hand",
        question="By hand: the contribution of « perdu » to pointage for the badge question at k1 = 2.0, b = 0.5.",
        judge=_judge_hand,
        hint_text="Reuse section 2's cell: idf and f do not depend on k1 or b; only the denominator "
                  "f + k1·(1 − b + b·|D|/avgdl) changes.",
        solution_code="""
n_with = len(index.postings["perdu"])                      # pages holding « perdu »
f = sum(index.postings["perdu"]["pointage"].values())      # title + body, weights 1.0
dl = sum(index.lengths["pointage"].values())
avgdl = sum(sum(v.values()) for v in index.lengths.values()) / index.n_docs
k1, b = 2.0, 0.5
answer = bm25.idf(index.n_docs, n_with) * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl))""",
        solution_value=_solution_hand,
        wrong_answers=[3.852, 3.010, 0.0],  # the default knobs' value; the idf alone; nothing
    ),
    "k1_zero": Exercise(
        name="k1_zero",
        question="At k1 = 0, what is cpf's score for the badge question? Compute it from idfs alone.",
        judge=_judge_k1_zero,
        hint_text="At k1 = 0 a word's contribution is idf · f / f: its idf, if the page holds it at all. "
                  "index.explain(hit) says which words cpf holds.",
        solution_code="""
held = [w for w in index.query_words("Que faire si j'ai perdu mon badge ?") if "cpf" in index.postings.get(w, {})]
answer = sum(bm25.idf(index.n_docs, len(index.postings[w])) for w in held)   # que, si, mon""",
        solution_value=_solution_k1_zero,
        wrong_answers=[7.772, 25.629],  # cpf's score at k1 = 1.2; the idfs of every query word
    ),
    "b_threshold": Exercise(
        name="b_threshold",
        question="For the badge question, the largest b (in steps of 0.05) at which the règlement intérieur is "
                 "still in the top 3.",
        judge=_judge_b,
        hint_text="Loop over b = 0.0, 0.05, … 1.0 and print the règlement intérieur's rank at each.",
        solution_code="""
for step in range(21):
    b = step * 0.05
    ids = [h.id for h in index.search("Que faire si j'ai perdu mon badge ?", b=b)]
    print(f"{b:.2f}", ids.index("reglement-interieur") + 1 if "reglement-interieur" in ids else "-")
answer = 0.4   # the last b before it falls to 4th""",
        solution_value=_solution_b,
        wrong_answers=[0.0, 0.75, 0.25],
    ),
    "title_weight": Exercise(
        name="title_weight",
        question=f"For « {WEIGHT_QUESTION} », find a title weight at which {WEIGHT_WINNER} overtakes "
                 f"{WEIGHT_LOSER} (body weight 1.0).",
        judge=_judge_weight,
        hint_text="Both titles say « restaurant »; only « Restaurant d’entreprise » also says « entreprise » "
                  "(company). Raise the title weight in whole steps.",
        solution_code="""
question = "Combien coûte un repas au restaurant d'entreprise ?"
for w in range(1, 8):
    print(w, [h.id for h in index.search(question, weights={"title": w, "body": 1.0})][:2])
answer = 5.0""",
        solution_value=_solution_weight,
        wrong_answers=[1.0, 3.0, 0.0],
    ),
    "all_words": Exercise(
        name="all_words",
        question="Find a handbook question (its id) whose answering page stays in the top 5 with match='all' "
                 "on the plain index.",
        judge=_judge_all,
        hint_text="match='all' needs every word of the question on the page: look for short questions, without "
                  "« combien » (how many) or a verb the page does not use; or loop over them all (few pass).",
        solution_code="""
from rungs.lab.handbook import load_questions

for q in load_questions():
    best = [p for p, g in q["judged"].items() if g == 2]
    if best and any(h.id in best for h in index.search(q["question"], match="all")):
        print(q["id"], q["question"], "|", q["english"])
answer = "q023"   # any id the loop prints""",
        solution_value=_solution_all,
        wrong_answers=["q001", "q022", "q999"],
    ),
    "stems": Exercise(
        name="stems",
        question="Find another pair of words that Snowball's French stemmer merges although they mean different "
                 "things.",
        judge=_judge_stems,
        hint_text="Try a noun and a verb that look alike: tokenise(word, stem=True) for each.",
        solution_code="""
print(tokenise("porte porter", stem=True))   # ['port', 'port']
answer = ("porte", "porter")   # a door, to carry""",
        solution_value=lambda: ("porte", "porter"),
        wrong_answers=[("congé", "congés"), ("heure", "heureux"), ("cours", "courir")],
    ),
}
