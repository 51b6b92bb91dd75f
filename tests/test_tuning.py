"""The tuning lab: metrics against ranx, the fast path against the readable one and bm25s, CACM, sweeps."""

import math
import random

import numpy as np
import pytest

from rungs import bm25

from rungs.lab import cacm

from rungs.lab import metrics as ev

from rungs.lab import tuning
from rungs.fastbm25 import FastBM25
from rungs.core.errors import BadArgument
from rungs.lab.handbook import load_pages, load_questions

from doubles import coin_toss
from test_search import _corpus, _vocabulary


@pytest.fixture(scope="module")
def handbook_runs():
    pages, questions = load_pages(), load_questions()
    index = bm25.build_index(pages)
    judged = [q for q in questions if q["relevant"]]
    # Two different runs, so that the metrics see varied rankings (ties, misses, partial hits).
    runs = {"bm25": {q["id"]: index.search(q["question"], limit=20) for q in judged},
            "all": {q["id"]: index.search(q["question"], limit=20, match="all", b=0.2) for q in judged}}
    return judged, runs


def test_metrics_equal_ranx_to_1e9(handbook_runs):
    from ranx import Qrels, Run, evaluate as ranx_evaluate

    judged, runs = handbook_runs
    qrels = Qrels({q["id"]: dict(q["relevant"]) for q in judged})
    ours = {"mrr": lambda r, rel: ev.reciprocal_rank(r, rel), "map": lambda r, rel: ev.average_precision(r, rel),
            "ndcg@5": lambda r, rel: ev.ndcg(r, rel, 5), "ndcg@10": lambda r, rel: ev.ndcg(r, rel, 10),
            "recall@5": lambda r, rel: ev.recall(r, rel, 5), "precision@5": lambda r, rel: ev.precision(r, rel, 5)}
    for name, run in runs.items():
        # ranx orders by score; our rankings are already ordered, so give it strictly decreasing scores.
        ranx_run = Run({qid: {r["id"]: float(len(ranking) - i) for i, r in enumerate(ranking)} or {"none": 0.0}
                        for qid, ranking in run.items()})
        theirs = ranx_evaluate(qrels, ranx_run, list(ours), make_comparable=True)
        mine = ev.evaluate(run, judged, ours)
        for metric in ours:
            assert math.isclose(mine[metric], theirs[metric], rel_tol=1e-9, abs_tol=1e-12), (name, metric)


PRESETS = [{}, bm25.FTS5, bm25.LUCENE, {"lengths": "lossy"}, {"match": "all", "repeats": "count"}]


@pytest.mark.parametrize("seed", range(10))
def test_fast_path_equals_the_readable_one(seed):
    rng = random.Random(100 + seed)
    vocabulary = _vocabulary(rng, 30)
    docs = _corpus(rng, rng.randint(1, 50), vocabulary)
    index = bm25.build_index(docs)
    fast = FastBM25.from_index(index)
    direct = FastBM25.from_documents(docs)
    for _ in range(20):
        query = " ".join(rng.choice(vocabulary + ["absent"]) for _ in range(rng.randint(1, 4)))
        knobs = {**rng.choice(PRESETS), "k1": rng.choice([0.0, 0.5, 1.2, 3.0]), "b": rng.choice([0.0, 0.4, 1.0]),
                 "weights": {"title": rng.choice([0.0, 1.0, 3.0]), "body": rng.choice([0.5, 1.0])}}
        limit = rng.choice([1, 3, 100])
        want = index.search(query, limit=limit, **knobs)
        for got in (fast.search(query, limit=limit, **knobs), direct.search(query, limit=limit, **knobs)):
            assert [r["id"] for r in got] == [r["id"] for r in want], (query, knobs)
            for a, b in zip(want, got):
                assert math.isclose(a["score"], b["score"], rel_tol=1e-9, abs_tol=1e-12)
                assert a.parts.keys() == b.parts.keys()


def test_fast_lucene_equals_bm25s_to_1e6():
    import bm25s

    rng = random.Random(7)
    # Pre-tokenised documents skip the tokenizer, so their words must already be folded: ASCII only.
    vocabulary = sorted({"".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 5))) for _ in range(80)})
    docs = [{"id": f"d{i:03d}", "body": [rng.choice(vocabulary[: rng.randint(5, 60)]) for _ in range(rng.randint(1, 80))]}
            for i in range(200)]
    fast = FastBM25.from_documents(docs, fields=("body",))
    retriever = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    retriever.index([d["body"] for d in docs], show_progress=False)
    for _ in range(20):
        query = [rng.choice(vocabulary) for _ in range(3)]
        query = query + query[:1]  # a repeated word: bm25s counts it once, so we ask for "once" too
        ours = fast.search(" ".join(query), limit=200, explain=False,
                           **{**bm25.LUCENE, "k1": 0.9, "b": 0.4, "repeats": "once"})
        found, scores = retriever.retrieve([list(dict.fromkeys(query))], k=len(docs), show_progress=False)
        theirs = {docs[i]["id"]: float(s) for i, s in zip(found[0], scores[0]) if s > 0}
        assert {r["id"] for r in ours} == set(theirs)
        for r in ours:
            assert math.isclose(r["score"], theirs[r["id"]], rel_tol=1e-6)


def test_lucene_one_byte_lengths():
    assert [bm25.lucene_length(n) for n in (0, 23, 39, 40, 41, 47, 100, 1000)] == [0, 23, 39, 40, 40, 46, 96, 984]
    assert all(bm25.lucene_length(n) <= n and n - bm25.lucene_length(n) < n / 8 + 1 for n in range(1, 5000))


def test_cacm_reproduces_the_published_map_within_0_01():
    try:
        docs, queries = cacm.load_documents(), cacm.load_queries()
    except cacm.CacmNotFound as err:
        pytest.skip(str(err))
    assert len(docs) == 3204 and len(queries) == 64 and sum(bool(q["relevant"]) for q in queries) == 52
    fast = FastBM25.from_documents([{"id": d["id"], "body": cacm.english(d["body"])} for d in docs], fields=("body",))
    fast.tokenizer = {"stopwords": cacm.LUCENE_STOPWORDS, "stem": cacm._porter()}
    result = ev.evaluate(lambda q: fast.search(q, limit=1000, explain=False, **{**bm25.LUCENE, "k1": 0.9, "b": 0.4}),
                         queries, {"MAP": lambda r, rel: ev.average_precision(r, rel)})
    assert abs(result["MAP"] - 0.3123) < 0.01


def test_split_is_fixed_disjoint_and_balanced():
    questions = load_questions()
    tune, held = tuning.halves(questions, seed=0)
    assert tuning.halves(questions, seed=0) == (tune, held)
    assert not {q["id"] for q in tune} & {q["id"] for q in held}
    assert abs(sum(q["kind"] == "paraphrase" for q in tune) - sum(q["kind"] == "paraphrase" for q in held)) <= 1


def test_sweep_has_one_row_per_setting():
    questions = [q for q in load_questions() if q["relevant"]][:10]
    fast = FastBM25.from_index(bm25.build_index(load_pages()))
    frame = tuning.sweep({"k1": [0.0, 1.2], "b": [0.0, 0.5, 1.0]},
                         lambda q, **kw: fast.search(q, limit=10, explain=False, **kw), questions, progress=False)
    assert len(frame) == 6 and {"k1", "b", "MRR", "recall@5", "nDCG@5", "answer@4"} <= set(frame.columns)
    assert frame["MRR"].between(0, 1).all()


def test_paired_test_tells_a_real_difference_from_luck():
    same = {f"q{i}": (i % 3) / 2 for i in range(40)}
    t = ev.paired_test(same, same)
    assert t["p"] == 1.0 and t["ci95"] == (0.0, 0.0) and t["equal"] == 40
    better = {q: min(1.0, v + 0.5) for q, v in same.items()}
    t = ev.paired_test(same, better)
    assert t["p"] < 0.001 and t["ci95"][0] > 0 and t["improved"] > 0 and t["degraded"] == 0
    # Noise: one question better, one worse, by the same amount — nothing to see.
    noise = dict(same, q0=same["q0"] + 0.5, q3=same["q3"] - 0.5)
    t = ev.paired_test(same, noise)
    assert t["p"] > 0.5 and t["ci95"][0] <= 0 <= t["ci95"][1]
    with pytest.raises(ev.BadArgument, match="same questions"):
        ev.paired_test(same, {"q0": 1.0})


def test_paired_test_agrees_with_ranx_fisher(handbook_runs):
    from ranx import Qrels, Run, compare

    judged, runs = handbook_runs
    qrels = Qrels({q["id"]: dict(q["relevant"]) for q in judged})
    ranx_runs = []
    for name, run in runs.items():
        r = Run({qid: {h.id: float(len(ranking) - i) for i, h in enumerate(ranking)} or {"none": 0.0}
                 for qid, ranking in run.items()}, name=name)
        ranx_runs.append(r)
    report = compare(qrels, ranx_runs, metrics=["mrr"], stat_test="fisher", n_permutations=20000,
                     random_seed=0, make_comparable=True)
    theirs = report.to_dict()["bm25"]["comparisons"]["all"]["mrr"]
    a = ev.per_question(runs["bm25"], judged)
    b = ev.per_question(runs["all"], judged)
    ours = ev.paired_test(a, b, trials=20000)["p"]
    assert abs(ours - theirs) < 0.01 or (ours < 0.001 and theirs < 0.001), (ours, theirs)


def test_holm_and_questions_needed():
    assert ev.holm({"a": 0.01, "b": 0.04, "c": 0.03}) == {"a": 0.03, "c": 0.06, "b": 0.06}
    # sd 0.2, difference 0.05: (2.80 × 4)² ≈ 126 questions.
    assert 120 <= ev.questions_needed(0.05, 0.2) <= 130
    assert ev.questions_needed(0.0, 0.2) is None


def test_answer_at_4_asks_for_a_page_that_answers_among_the_four_sent():
    relevant = {"answers": 2, "helps": 1}
    assert ev.METRICS["answer@4"](["x", "helps", "y", "answers"], relevant) == 1.0
    assert ev.METRICS["answer@4"](["x", "helps", "y", "z", "answers"], relevant) == 0.0  # fifth: never sent
    assert ev.METRICS["answer@4"](["helps"], relevant) == 0.0                          # helps, does not answer
    # recall@5 is the share of ALL the relevant pages: a page that only helps counts as much as one that answers.
    assert ev.METRICS["recall@5"](["helps"], relevant) == 0.5
    assert ev.success(["helps"], relevant, 4) == 1.0  # success@k at grade 1, trec_eval's


def test_judged_at_k_says_how_much_of_the_top_was_read_by_a_judge():
    q = {"id": "q", "question": "?", "relevant": {"a": 2}, "judged": {"a": 2, "b": 0}}
    assert ev.judged(["a", "b", "c", "d"], q["judged"], 4) == 0.5
    assert ev.judged(["a"], q["judged"], 4) == 1.0  # no page at ranks 2-4: nothing unjudged there
    assert ev.judged_share(lambda text: ["a", "c"], [q, {**q, "id": "u", "relevant": {}}], at=2) == 0.5


def test_p_values_that_round_to_zero_are_shown_as_below_a_thousandth():
    assert ev.p_text(0.0001) == "< 0.001" and ev.p_text(0.0004999) == "< 0.001" and ev.p_text(0.038) == "0.038"
    assert ev.p_text(1.0) == "1.000"


def test_holm_runs_over_every_comparison_a_cell_reads_and_the_table_says_when_interval_and_test_disagree():
    questions = [{"id": f"q{i}", "question": f"q{i}", "relevant": {"x": 1}} for i in range(20)]
    one = ev.compare({"base": {q["id"]: [] for q in questions}, "b": {q["id"]: [] for q in questions}},
                     questions, baseline="base")  # two equal runs: one table of one comparison
    # Three metrics of one cell, each with a p of 0.02 and an interval that excludes 0.
    tables = {m: [dict(r) for r in one] for m in ("MRR", "recall@5", "nDCG@5")}
    for rows in tables.values():
        rows[1].update(p=0.02, diff=0.1, ci95=(0.01, 0.2), improved=6, degraded=0, mean=0.1)
    together = ev.holm_across(tables)
    assert [rows[1]["p_holm"] for rows in together.values()] == pytest.approx([0.06] * 3)
    assert all(rows[1]["family"] == 3 for rows in together.values())
    text = ev.comparison_table(together["MRR"])
    # The interval excludes 0, the corrected test does not call it: one sentence says why.
    assert "no measurable difference" in text and "corrected for the 3 comparisons" in text
    assert "The interval and the verdict disagree for b" in text
    assert "disagree" not in ev.comparison_table(one)


def test_held_out_tunes_on_one_half_and_reports_the_other():
    pages, questions = load_pages(), load_questions()
    index = bm25.build_index(pages, stopwords=True)
    run = lambda q, **kw: index.search(q, limit=10, **kw)  # noqa: E731
    out = tuning.held_out({"k1": [0.0, 1.2]}, run, questions, baseline=lambda q: index.search(q, limit=10))
    tune, held = tuning.halves(questions)
    mrr = lambda qs, k1: ev.evaluate(lambda q: run(q, k1=k1), qs)["MRR"]  # noqa: E731
    # The setting chosen is the better one ON THE TUNING HALF, and it is scored again on the other half.
    assert out["best"]["k1"] == max((0.0, 1.2), key=lambda k1: mrr(tune, k1)) and isinstance(out["best"]["k1"], float)
    assert mrr(tune, 0.0) != mrr(tune, 1.2)  # the test would say nothing if both settings tied
    assert out["tune"] == pytest.approx(mrr(tune, out["best"]["k1"]))
    assert out["held"] == pytest.approx(mrr(held, out["best"]["k1"]))
    assert out["tune_questions"] + out["held_questions"] == sum(1 for q in questions if q["relevant"])
    assert out["test"]["n"] == out["held_questions"]


def test_held_out_keeps_its_default_without_evidence_and_says_what_the_sweep_preferred():
    # Two settings that differ on one question only: the sweep prefers one, by luck of that question; the
    # default must stay (no paired test can call one question evidence), and the sweep's choice is reported.
    questions = [q for q in load_questions() if q["relevant"]]
    tune, _ = tuning.halves(questions, seed=0)
    unlucky = sorted(q["question"] for q in tune)[0]  # a question of the tuning half
    first = {q["question"]: sorted(q["relevant"])[0] for q in questions}

    def run(text, setting):
        hit = {"id": first[text], "score": 1.0}
        return [] if setting == "default" and text == unlucky else [hit]

    grid = {"setting": ["default", "lucky"]}
    out = tuning.held_out(grid, run, questions, default={"setting": "default"})
    assert out["kept_default"] and out["best"] == {"setting": "default"}
    assert out["sweep_best"] == {"setting": "lucky"} and out["sweep_best_tune"] > out["tune"]
    assert out["tune_test"]["diff"] > 0 and out["tune_test"]["p"] >= 0.05
    # With the default first in the grid and no difference on the tuning half, nothing to keep: no sweep_best.
    same = tuning.held_out(grid, lambda text, setting: run(text, "lucky"), questions, default={"setting": "default"})
    assert not same["kept_default"] and same["best"] == {"setting": "default"} and "sweep_best" not in same
    with pytest.raises(BadArgument, match="default must be one setting"):
        tuning.held_out(grid, run, questions, default={"setting": "other"})


# ---------------------------------------------------------------- the protocol, on sweeps where nothing is better

NULL_DRAWS, OLD_GATE_DRAWS = 400, 100


def test_the_protocol_rarely_calls_a_null_sweep_better_and_the_old_gate_often_does():
    # 30 settings, 80 questions, every ranking a coin toss: a 5 % test may say « better » about 1 time in 20.
    default = {"setting": 0}
    moved = sum(tuning.choose(*coin_toss(draw), default=default, final=False, seed=draw)["best"] != default
                for draw in range(NULL_DRAWS))
    assert moved / NULL_DRAWS <= 0.05, f"the protocol called {moved} of {NULL_DRAWS} null sweeps better"
    # The old gate tests the sweep's best against the default on the half that picked it: the winner's curse.
    fooled = sum(tuning.held_out(*coin_toss(draw), default=default, seed=draw)["best"] != default
                 for draw in range(OLD_GATE_DRAWS))
    assert fooled / OLD_GATE_DRAWS >= 0.15, f"the old gate was fooled {fooled} times in {OLD_GATE_DRAWS}"


def test_the_protocol_still_finds_a_setting_that_is_better():
    # A test that never moves would pass the one above: one setting of 30 puts the answer first 40 % more often.
    default = {"setting": 0}
    found = [tuning.choose(*coin_toss(draw, better=7, lift=0.4), default=default, final=False, seed=draw)["best"]
             for draw in range(40)]
    assert sum(b == {"setting": 7} for b in found) >= 30, found


def test_choose_decides_on_folds_that_did_not_choose_and_scores_the_final_half_once():
    grid, run, qs = coin_toss(3, settings=4, better=2, lift=0.6)
    out = tuning.choose(grid, run, qs, default={"setting": 0}, folds=4, repeats=3, seed=1)
    development, final = tuning.halves(qs, seed=1)
    assert out["development_questions"] == len(development) and out["final_questions"] == len(final)
    cv = out["cv"]
    assert len(cv["fold_gains"]) == 12 and len(cv["repeat_gains"]) == 3 and sum(p["folds"] for p in cv["picks"]) == 12
    assert cv["ci95"][0] > 0 and cv["p"] < 0.05 and out["best"] == {"setting": 2} and not out["kept_default"]
    # The sweep's means are the development half's; the final half is scored for the choice and the default.
    mrr = lambda s, half: ev.evaluate(lambda q: run(q, s), half)["MRR"]  # noqa: E731
    assert out["sweep"]["MRR"].tolist() == pytest.approx([mrr(s, development) for s in range(4)])
    assert out["final"]["chosen"] == pytest.approx(mrr(2, final)) and out["final"]["test"]["n"] == len(final)
    # Deciding again from the same scores, for another default, is what choosing from that default decides.
    again = tuning.decide(out, metric="MRR", default={"setting": 2})
    fresh = tuning.choose(grid, run, qs, default={"setting": 2}, folds=4, repeats=3, seed=1, final=False)
    assert again["kept_default"] and again["cv"] == fresh["cv"] and again["best"] == fresh["best"] == {"setting": 2}
    assert set(out["cv"]["out_of_fold"]) == {q["id"] for q in development}
    # An exploration does not touch the final half.
    assert "final" not in tuning.choose(grid, run, qs, default={"setting": 0}, folds=4, repeats=3, final=False)
    with pytest.raises(BadArgument, match="default must be one setting"):
        tuning.choose(grid, run, qs, default={"setting": 9})
    with pytest.raises(BadArgument, match="folds"):
        tuning.choose(grid, run, qs[:6], default={"setting": 0})


def test_questions_added_later_never_move_an_old_question_to_the_other_half():
    from rungs.lab.handbook import load_questions

    questions = load_questions()
    old = [q for q in questions if not q.get("added")]
    before = [[q["id"] for q in half] for half in tuning.halves(old, seed=0, answerable_only=False)]
    after = [[q["id"] for q in half if not q.get("added")]
             for half in tuning.halves(questions, seed=0, answerable_only=False)]
    assert after == before and len(old) == 155 < len(questions)
    # The new questions are split evenly too, kind by kind.
    new = [[q for q in half if q.get("added")] for half in tuning.halves(questions, seed=0, answerable_only=False)]
    for kind in ("lexical", "paraphrase", "unanswerable"):
        counts = [sum(q["kind"] == kind for q in half) for half in new]
        assert abs(counts[0] - counts[1]) <= 1, (kind, counts)
