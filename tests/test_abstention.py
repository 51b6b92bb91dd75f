"""The stored abstention runs as notebook 03 reads them: rungs.lab.abstention on a summary of known numbers.

``benchmarks/bench_abstain.py summary`` writes ``results/abstain.json``; these
tests hold the module that reads it to a small summary of the same shape whose
every number is known: a partial run says how far it got, the baselines come
in their order with what each loses, the threshold table and the protocol's
choice say nothing they were not given, and a Wilson interval is the textbook's.
"""

from __future__ import annotations

import json
import math
import os
import re

import pytest

from rungs.core.errors import BadArgument, RungsError
from rungs.lab import abstention


def measures(n, right, right_answerable=None, idk_unanswerable=None, wrong_idk=None, citation_precision=None,
             unsupported_shown=0, seconds_median=None):
    return {"n": n, "right": right, "right_answerable": right_answerable, "idk_unanswerable": idk_unanswerable,
            "wrong_idk": wrong_idk, "citation_precision": citation_precision, "unsupported_shown": unsupported_shown,
            "refused": 0, "seconds_median": seconds_median}


def summary(*, complete=True) -> dict:
    """A summary in abstain.json's shape: 20 questions, 10 a half."""
    empty = measures(0, None)
    def system(decide, report):
        both = measures(decide["n"] + report["n"], None) if report["n"] else decide
        return {"decide": decide, "report": report, "all": both}
    out = {"halves": {"decide": 10, "report": 10}, "systems": {}, "paired": {},
           "complete": {"pointing-lead": 20 if complete else 7, "free": 20 if complete else 7,
                        "oracle-pointing-lead": 20 if complete else 0, "closed-book": 20 if complete else 0}}
    if not complete:
        out["systems"]["pointing-lead"] = system(measures(7, 4 / 7, 0.5, 1.0, 0.25, 0.8), empty)
        out["systems"]["free"] = system(measures(7, 3 / 7, 0.5, 0.0, 0.25, 0.7), empty)
        return out
    out["systems"] = {
        "closed-book": system(measures(10, 0.2), measures(10, 0.3, 0.0, 1.0, 0.0)),
        "oracle-pointing-lead": system(measures(10, 0.8), measures(10, 0.8, 0.75, 1.0, 0.125, 0.95)),
        "pointing-lead": system(measures(10, 0.5), measures(10, 0.6, 0.625, 0.5, 0.25, 0.85, seconds_median=17.2)),
        "pointing-lead, gate 0.4": system(measures(10, 0.6), measures(10, 0.7, 0.625, 1.0, 0.375, 0.9)),
        "pointing-lead, gate 0.5": system(measures(10, 0.6), measures(10, 0.5, 0.5, 0.5, 0.5, 0.9)),
        "free": system(measures(10, 0.4), measures(10, 0.5, 0.5, 0.5, 0.25, 0.7)),
    }
    out["thresholds"] = {"pointing-lead": [{"threshold": 0.4, "passes": 6, "precision": 5 / 6, "recall": 0.625},
                                           {"threshold": 0.5, "passes": 0, "precision": None, "recall": 0.0}]}
    out["chosen"] = "pointing-lead, gate 0.4"
    out["choice"] = {"best": {"system": "pointing-lead", "gate": 0.4}, "kept_default": False,
                     "default": {"system": "pointing-lead", "gate": 0.0},
                     "cv": {"gain": 0.1, "ci95": [0.02, 0.18], "p": 0.01},
                     "sweep": [{"system": s, "gate": g, "right": r} for s, g, r in
                               [("pointing-lead", 0.0, 0.5), ("pointing-lead", 0.4, 0.6), ("free", 0.0, 0.4),
                                ("free", 0.4, 0.45)]]}
    out["paired"] = {"pointing-lead, gate 0.4": {"report": {"right": {
        "diff": 0.1, "ci95": [-0.1, 0.3], "p": 0.6, "p_holm": 1.0, "improved": 2, "degraded": 1, "questions": 10}}}}
    return out


def test_load_reads_the_committed_summary_and_names_a_missing_one(tmp_path):
    committed = abstention.load()
    assert {"halves", "systems"} <= set(committed)
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "shape.json").write_text(json.dumps({**summary(), "halves": {"decide": "ten"}}), encoding="utf-8")
    os.mkfifo(tmp_path / "tube.json")  # read, it would be waited on forever
    for name in ("abstain.json", "broken.json", "shape.json", "tube.json", "."):
        with pytest.raises(RungsError, match="bench_abstain.py summary"):
            abstention.load(tmp_path / name)
    with pytest.raises(RungsError, match="path"):
        abstention.load(5)


def broken_summaries():
    """Summaries a reader may hold by mistake: each breaks one part the module reads."""
    good = summary()
    yield from (None, 5, "abstain.json", [], {}, {"halves": {"decide": 10, "report": 10}})
    yield {**good, "halves": {"decide": -1, "report": 10}}
    yield {**good, "systems": {"pointing-lead": 5}}
    yield {**good, "systems": {"pointing-lead": {"report": {"n": 10, "right": float("nan")}}}}
    yield {**good, "systems": {"pointing-lead": {"report": {"n": True, "right": 0.5}}}}
    yield {**good, "complete": {"pointing-lead": "all"}}
    yield {**good, "thresholds": {"pointing-lead": [{"threshold": 0.4, "passes": 6, "precision": 2.0}]}}
    yield {**good, "chosen": 3}
    yield {**good, "choice": {**good["choice"], "best": {"system": "pointing-lead", "gate": "0.4"}}}
    yield {**good, "choice": {**good["choice"], "cv": {"gain": 0.1, "ci95": [0.02], "p": 0.01}}}
    yield {**good, "choice": {**good["choice"], "sweep": [{"system": None, "gate": 0.4, "right": 0.6}]}}
    yield {**good, "paired": {"pointing-lead, gate 0.4": {"report": {"right": {"diff": 0.1, "ci95": [-0.1, 0.3],
                                                                             "p": 0.6, "improved": 2}}}}}


READERS = [lambda s: abstention.check_summary(s), lambda s: abstention.questions(s), abstention.progress,
           lambda s: abstention.answered(s, "pointing-lead"), abstention.is_complete,
           lambda s: abstention.baselines(s), lambda s: abstention.losses(s), lambda s: abstention.loss_lines(s),
           lambda s: abstention.baselines_table(s), lambda s: abstention.threshold_table(s),
           abstention.choice_lines, abstention.grid_table, lambda s: abstention.plot_thresholds(s),
           lambda s: abstention.floor_table(s)]


@pytest.mark.parametrize("n", range(len(list(broken_summaries()))))
def test_a_summary_of_another_shape_is_named_not_a_crash(n):
    import matplotlib

    matplotlib.use("Agg")
    broken = list(broken_summaries())[n]
    for read in READERS:
        with pytest.raises(BadArgument, match=r"summary.*abstention\.load\(\)"):
            read(broken)


@pytest.mark.parametrize("call, name", [
    (lambda: abstention.baselines(summary(), half="both"), "half"),
    (lambda: abstention.baselines(summary(), mode=None), "mode"),
    (lambda: abstention.answered(summary(), 3), "system"),
    (lambda: abstention.threshold_table(summary(), ["pointing-lead"]), "system"),
    (lambda: abstention.plot_right(5), "rows"),
    (lambda: abstention.plot_right([{"n": 10, "right": 1.5}]), "rows[0]"),
    (lambda: abstention.plot_right([], ax="axes"), "ax"),
    (lambda: abstention.plot_right([], title=7), "title"),
    (lambda: abstention.floor_table(summary(), half="both"), "half"),
])
def test_a_wrong_argument_is_named(call, name):
    with pytest.raises(BadArgument, match=re.escape(name)):
        call()


def test_a_partial_run_says_how_far_it_got_half_by_half():
    partial = summary(complete=False)
    assert abstention.questions(partial) == 20 and abstention.questions(partial, "decide") == 10
    assert abstention.answered(partial, "pointing-lead") == 7
    assert abstention.answered(partial, "pointing-lead", "decide") == 7
    assert abstention.answered(partial, "pointing-lead", "report") == 0
    assert abstention.answered(partial, "closed-book") == 0
    assert not abstention.is_complete(partial)
    said = abstention.progress(partial).splitlines()
    pointing = next(line for line in said if "pointing-lead" in line).split()
    assert pointing == ["pointing-lead", "deciding", "half", "7", "of", "10", "reporting", "half", "not", "run", "yet"]
    assert next(line for line in said if "closed-book" in line).split() == ["closed-book", "not", "run", "yet"]
    assert abstention.is_complete(summary()) and abstention.progress(summary()) == ""


def test_a_half_nobody_ran_is_said_not_run_never_filled_in():
    # The coordinator's round: the deciding half only, every baseline on it, the reporting half not run.
    decided = summary()
    for system in decided["systems"].values():
        system["report"] = measures(0, None)
    decided["complete"] = dict.fromkeys(decided["complete"], 10)
    decided["paired"] = {}
    said = abstention.progress(decided)
    assert "deciding half 10 of 10" in said and "reporting half not run yet" in said
    assert "not run yet" in abstention.baselines_table(decided, half="report")
    assert "0.800" in abstention.baselines_table(decided, half="decide")
    assert abstention.choice_lines(decided)[-1].startswith("  on the reporting half: not run yet")


def test_the_baselines_come_in_order_and_split_the_loss():
    rows = abstention.baselines(summary(), mode="pointing-lead", half="report")
    assert [r["system"] for r in rows] == ["closed-book", "oracle-pointing-lead", "pointing-lead",
                                           "pointing-lead, gate 0.4"]  # the protocol's gate, not a fixed one
    assert [r["role"] for r in rows] == ["closed book", "judged passages", "shipped retriever",
                                         "shipped retriever + gate"]
    loss = abstention.losses(summary(), mode="pointing-lead", half="report")
    assert loss["at retrieval"] == pytest.approx(0.75 - 0.625)  # the oracle's answerable share, less the shipped
    assert loss["at reading"] == pytest.approx(1 - 0.75)
    assert loss["the gate"] == pytest.approx(0.7 - 0.6)
    table = abstention.baselines_table(summary(), mode="pointing-lead", half="report")
    assert "judged passages" in table and "0.750" in table and "0.625" in table
    said = abstention.loss_lines(summary(), mode="pointing-lead", half="report")
    assert [line.split()[-1] for line in said] == ["+0.125", "+0.250", "+0.100"]


def test_no_gate_kept_by_the_protocol_is_said_and_the_fixed_gates_are_only_read():
    kept = summary()
    kept["chosen"] = "pointing-lead"  # the bench names a gate chosen at 0 by its mode alone
    kept["choice"] = {**kept["choice"], "best": {"system": "pointing-lead", "gate": 0.0}, "kept_default": True}
    kept["paired"] = {"pointing-lead, gate 0.5": {"report": {"right": {
        "diff": -0.1, "ci95": [-0.3, 0.1], "p": 0.5, "p_holm": 0.9, "improved": 1, "degraded": 2, "questions": 10}}}}
    assert "pointing-lead (no gate)" in abstention.baselines_table(kept, half="report")
    assert abstention.loss_lines(kept, half="report")[2].endswith("the protocol kept no gate (threshold 0)")
    lines = abstention.choice_lines(kept)
    assert "pointing-lead, gate 0.0 (the default kept)" in lines[0]
    assert lines[2] == "  on the reporting half, once: pointing-lead without a gate, share right 0.600 on 10 questions"
    assert "(not chosen)" in lines[3] and lines[4].split()[:4] == ["pointing-lead,", "gate", "0.5", "share"]
    assert "-0.100 [-0.300, +0.100], p Holm 0.900, 1 better / 2 worse of 10" in lines[4]


def test_a_gate_chosen_for_another_mode_is_named_not_shown_as_this_ones():
    other = {**summary(), "chosen": "free, gate 0.4"}
    rows = abstention.baselines(other, mode="pointing-lead", half="report")
    assert rows[3]["system"] is None and rows[3]["n"] == 0
    assert "gate: free, gate 0.4 chosen" in abstention.baselines_table(other, mode="pointing-lead", half="report")
    assert "the protocol chose free, gate 0.4, another mode" in abstention.loss_lines(other, half="report")[2]


def test_a_baseline_not_run_yet_is_said_not_guessed():
    rows = abstention.baselines(summary(complete=False), mode="pointing-lead", half="decide")
    assert [r["system"] for r in rows] == ["closed-book", "oracle-pointing-lead", "pointing-lead", None]
    assert rows[0]["n"] == 0 and rows[0]["right"] is None
    table = abstention.baselines_table(summary(complete=False), mode="pointing-lead", half="decide")
    assert "not run yet" in table and "gate: not chosen yet" in table
    assert abstention.losses(summary(complete=False), mode="pointing-lead", half="decide")["at retrieval"] is None
    lines = abstention.loss_lines(summary(complete=False), mode="pointing-lead", half="decide")
    assert "not run yet" in lines[0] and "the gate not chosen yet" in lines[2]


def test_the_threshold_table_shows_what_it_was_given():
    table = abstention.threshold_table(summary(), "pointing-lead")
    lines = table.splitlines()
    assert lines[0] == "pointing-lead, over the 20 questions it answered:"
    assert lines[2].split() == ["0.4", "6", "0.833", "0.625"]
    assert lines[3].split() == ["0.5", "0", "—", "0.000"]  # nothing passes: no precision, not a 0
    waiting = abstention.threshold_table(summary(complete=False), "pointing-lead")
    assert "written once" in waiting and "7 of its 10 questions" in waiting


def test_the_choice_is_read_from_the_deciding_half_and_reported_once():
    lines = abstention.choice_lines(summary())
    assert "pointing-lead, gate 0.4" in lines[0] and "default given way" in lines[0]
    assert any("+0.100 [+0.020, +0.180], p 0.010" in line for line in lines)
    assert any("reporting half" in line and "+0.100" in line and "p Holm 1.000" in line for line in lines)
    grid = abstention.grid_table(summary())
    assert grid.splitlines()[0].split() == ["mode", "0.0", "0.4"]
    assert grid.splitlines()[1].split() == ["pointing-lead", "0.500", "0.600"]
    waiting = abstention.choice_lines(summary(complete=False))
    assert len(waiting) == 1 and "7 of 10" in waiting[0]  # the deciding half, counted


@pytest.mark.parametrize("k, n, low, high", [(10, 16, 0.39, 0.82), (0, 10, 0.0, 0.28), (10, 10, 0.72, 1.0)])
def test_the_wilson_interval_is_the_textbooks(k, n, low, high):
    lo, hi = abstention.wilson(k, n)
    assert round(lo, 2) == low and round(hi, 2) == high
    assert lo - 1e-9 <= k / n <= hi + 1e-9


def test_a_wilson_interval_of_nothing_is_refused():
    with pytest.raises(RungsError):
        abstention.wilson(3, 0)
    with pytest.raises(RungsError):
        abstention.wilson(5, 4)


def test_the_plot_draws_each_share_with_its_interval():
    import matplotlib

    matplotlib.use("Agg")
    rows = abstention.baselines(summary(), mode="pointing-lead", half="report")
    ax = abstention.plot_right(rows)
    assert [round(b.get_width(), 3) for b in ax.patches] == [0.3, 0.8, 0.6, 0.7]
    [bars] = ax.collections  # one error bar a row, from its Wilson low to its Wilson high
    drawn = [(round(seg[0][0], 6), round(seg[1][0], 6)) for seg in bars.get_segments()]
    assert drawn == [tuple(round(x, 6) for x in abstention.wilson(round(r["right"] * r["n"]), r["n"])) for r in rows]
    assert ax.get_xlim() == (0, 1)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("closed book") and "n = 10" in labels[0]
    partial = abstention.baselines(summary(complete=False), mode="pointing-lead", half="decide")
    assert len(abstention.plot_right(partial).patches) == 1  # only what has been run is drawn


def test_the_threshold_plot_draws_precision_and_recall():
    import matplotlib

    matplotlib.use("Agg")
    ax = abstention.plot_thresholds(summary(), "pointing-lead")
    names = [line.get_label() for line in ax.lines]
    assert names == ["precision of « answerable »", "recall of « answerable »"]
    assert ax.get_xlabel() and ax.get_ylabel() == "share (precision, recall)"  # both axes say what they hold
    assert list(ax.lines[1].get_ydata()) == [0.625, 0.0]
    assert math.isnan(ax.lines[0].get_ydata()[1])  # no precision where nothing passes


def test_the_committed_summary_reads_without_error():
    committed = abstention.load()
    json.dumps(abstention.baselines(committed, mode="pointing-lead", half="all"))
    abstention.progress(committed)
    abstention.choice_lines(committed)


def test_the_floor_sits_beside_the_model_it_copies_from_with_its_paired_test():
    floored = summary()
    floored["systems"]["copy"] = {"report": measures(10, 0.4, 0.75, 0.0, 0.0, 0.3)}
    floored["systems"]["copy, gate 0.4"] = {"report": measures(10, 0.7, 0.625, 0.5, 0.125, 0.35)}
    floored["paired_floor"] = {"copy": {"report": {"right_answerable": {
        "n": 8, "diff": 0.125, "ci95": [-0.1, 0.35], "p": 0.5, "p_holm": 0.9, "improved": 2, "degraded": 1}}}}
    lines = abstention.floor_table(floored, half="report").splitlines()
    rows = {line.split("  ")[0]: line for line in lines[2:] if not line.startswith("  ")}
    assert list(rows) == ["pointing-lead", "copy (no model)", "copy, gate 0.4", "oracle-pointing-lead",
                          "oracle-copy (no model)"]  # each copy under the model it copies from, its gates between
    assert "0.400  0.750  0.000  0.000  0.300" in rows["copy (no model)"]
    assert "not run yet" in rows["oracle-copy (no model)"]  # never borrowed from another system
    assert lines[-1] == "  copy − pointing-lead, right (answerable), paired on 8: +0.125 [-0.100, +0.350], p Holm 0.900, 2 better / 1 worse"
    assert "paired" not in abstention.floor_table(summary(), half="report")  # no test stored, none shown
