"""The tuning lab's tools: split the questions, sweep the knobs, choose honestly, draw what the sweep found.

What it is for: choosing k1, b, the title weight or the fusion constant for
*your* documents — and knowing whether the choice holds on questions it was
not tuned on. The protocol is ``choose``: the questions are split once into a
development half and a final half; on the development half, repeated k-fold
cross-validation runs « tune on the other folds, then compare the pick with
the default on this fold », so that every gain is measured on questions that
took no part in choosing; the default gives way only if that gain passes a
test made for folds that share their training questions; and the final half
is scored once, at the end, for the setting you ship. On null sweeps (30
settings, 80 questions, no setting better than the default) it said « better »
in 3.2 % of 1,000 draws; the old gate, ``held_out`` (the best of the sweep
against the default, tested on the very half that picked it), in 18.2 % of 400
(``benchmarks/bench_tuning_null.py``, ``benchmarks/results/tuning_null.json``;
``tests/test_tuning.py`` checks both).
Taught in notebooks 02 and 06.

Cost: one ranking per question per setting on the development half (the
cross-validation itself is arithmetic on those scores), and one per question
for two settings on the final half; with ``rungs.fastbm25`` a setting of the
handbook costs a few milliseconds.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping

from ..core.errors import BadArgument, check_bool, check_choice, check_int, check_names, check_number
from .metrics import METRICS, check_questions, evaluate, mean, paired_test, per_question

#: The most settings one sweep may try: each costs a ranking per question, and a grid's size is a
#: product (five knobs of twenty values are 3.2 million settings — days, not a sweep).
MAX_SETTINGS = 10_000


def halves(questions: list[dict], *, seed: int = 0, answerable_only: bool = True) -> tuple[list, list]:
    """Two halves, shuffled with a fixed seed, each kind of question divided evenly between them.

    Questions that carry « added » (text: when they joined the collection) are split after the others,
    batch by batch: the halves of the questions already there do not move."""
    # An integer seed: random.Random hashes anything else, and a NaN's hash changes from run to run.
    seed = check_int(seed, "seed")
    check_bool(answerable_only, "answerable_only")
    questions = check_questions(questions)
    if any(not isinstance(q.get("kind", ""), str) for q in questions):
        raise BadArgument("a question's 'kind' must be text (lexical, paraphrase, unanswerable…)")
    pool = [q for q in questions if q["relevant"]] if answerable_only else list(questions)
    if any(not isinstance(q.get("added") or "", str) for q in pool):
        raise BadArgument("a question's 'added' must be text (when the question joined the collection)")
    rng = random.Random(seed)
    tune, held = [], []
    # Questions added to a collection later carry « added » (when they came): they are split in a pass of
    # their own, after the others, so adding questions never moves an old one to the other half.
    for batch in sorted({q.get("added") or "" for q in pool}):
        members = [q for q in pool if (q.get("added") or "") == batch]
        for kind in sorted({q.get("kind", "") for q in members}):
            group = sorted((q for q in members if q.get("kind", "") == kind), key=lambda q: q["id"])
            rng.shuffle(group)
            half = len(group) // 2
            tune += group[:half]
            held += group[half:]
    return tune, held


def sweep(param_grid: dict, run_fn, questions: list[dict], *, metrics: dict | None = None,
          progress: bool = True):
    """Evaluate ``run_fn(question_text, **setting)`` for every setting of the grid; one row per setting.

    ``param_grid`` maps each knob to the values to try (their product is swept).
    Returns a pandas DataFrame with one column per knob and per metric.
    """
    import pandas as pd

    grid = check_grid(param_grid)
    if not callable(run_fn):
        raise BadArgument(f"run_fn must be a function (question_text, **setting) → ranking, not {type(run_fn).__name__}")
    check_bool(progress, "progress")
    names = list(grid)
    settings = [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]
    if progress:
        # Plain text updated in place, not a tqdm widget: a saved widget shows « 0% » forever in a static view.
        from ..core.display import progress as _progress
        settings_iter = _progress(settings, desc="sweep")
    else:
        settings_iter = settings
    rows = []
    for setting in settings_iter:
        scores = evaluate(lambda q, s=setting: run_fn(q, **s), questions, metrics or METRICS)
        rows.append({**setting, **{k: v for k, v in scores.items() if k not in ("questions", "skipped")}})
    return pd.DataFrame(rows)


def check_grid(param_grid) -> dict[str, list]:
    """A grid: knob name → a non-empty list of values; a bare string is refused (it would sweep its letters)."""
    if not isinstance(param_grid, Mapping):
        raise BadArgument(f"param_grid must be a dict of knob → values to try, not {type(param_grid).__name__}")
    check_names(list(param_grid), "param_grid's knobs")
    grid, size = {}, 1
    for name, values in param_grid.items():
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
            raise BadArgument(f"param_grid[{name!r}] must be a list of values, like [{values!r}], "
                              f"not {type(values).__name__} {values!r}"[:200])
        grid[name] = list(values)
        if not grid[name]:
            raise BadArgument(f"param_grid[{name!r}] is empty: give at least one value to try")
        size *= len(grid[name])
    if size > MAX_SETTINGS:
        raise BadArgument(f"param_grid has {size:,} settings; a sweep tries at most {MAX_SETTINGS:,} "
                          "(sweep fewer knobs at a time, or fewer values)")
    return grid


def heatmap(frame, x: str, y: str, value: str, *, ax=None, title: str = ""):
    """A metric over two knobs (the others already fixed or averaged out), with the best cell marked."""
    import matplotlib.pyplot as plt

    _check_frame(frame, [x, y], [value])
    if len({x, y, value}) < 3:
        raise BadArgument(f"x, y and value are {x!r}, {y!r} and {value!r}: a heatmap draws a metric (value) over "
                          "two different knobs (x and y)")
    table = frame.pivot_table(index=y, columns=x, values=value, aggfunc="max")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.8))
    image = ax.imshow(table.values, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(table.columns)), [_tick(v) for v in table.columns])
    ax.set_yticks(range(len(table.index)), [_tick(v) for v in table.index])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    best = divmod(int(table.values.argmax()), table.shape[1])
    # The best cell is outlined, not starred: a marker on top would hide the value the reader wants.
    ax.add_patch(plt.Rectangle((best[1] - 0.5, best[0] - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5))
    for (i, j), v in zip(itertools.product(range(table.shape[0]), range(table.shape[1])), table.values.ravel()):
        ax.text(j, i, f"{v:.3f}", ha="center", va="center", fontsize=7, color="white" if v < table.values.mean() else "black")
    ax.figure.colorbar(image, ax=ax, label=value)
    ax.set_title(title)
    return ax


def line(frame, x: str, values: list[str], *, ax=None, title: str = "", ylabel: str | None = None,
         xscale: str = "linear"):
    """Metrics along one knob. ``xscale="symlog"`` spreads values such as 0, 1, 5, 60, 1000 (0 included)."""
    import matplotlib.pyplot as plt

    values = check_names(values, "values")
    if not values:
        raise BadArgument("values is empty: name at least one metric to draw, like ['MRR']")
    _check_frame(frame, [x], values)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.2))
    frame = frame.sort_values(x)  # a grid lists its default first: plotted in that order the line zigzags
    for v in values:
        ax.plot(frame[x], frame[v], marker="o", label=v)
    # symlog is linear below 1 and logarithmic above, so k = 0 has a place on the axis.
    ax.set_xscale(xscale, **({"linthresh": 1} if xscale == "symlog" else {}))
    if xscale != "linear":  # plain numbers (1, 10, 100) rather than powers of ten
        ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda value, _: f"{value:g}"))
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel if ylabel is not None else (values[0] if len(values) == 1 else "score (higher is better)"))
    ax.legend()
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return ax


def _check_frame(frame, knobs: list, values: list) -> None:
    """A sweep's frame to draw: a DataFrame with rows, the knobs' columns, and the values' columns as numbers."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise BadArgument(f"frame must be a pandas DataFrame (what sweep returns), not {type(frame).__name__}")
    if frame.empty:
        raise BadArgument("frame is empty: sweep at least one setting before drawing it")
    missing = [c for c in [*knobs, *values] if not isinstance(c, str) or c not in frame.columns]
    if missing:
        raise BadArgument(f"frame has no column {missing[0]!r}; its columns are {list(frame.columns)}"[:300])
    for c in values:
        if not pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]):
            raise BadArgument(f"frame[{c!r}] must hold numbers (a metric's values), not {frame[c].dtype}")


def _tick(value) -> str:
    # A knob's value as a tick: 0.75 as « 0.75 », a word (match="any") as itself.
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def held_out(param_grid: dict, run_fn, questions: list[dict], *, baseline=None, default: dict | None = None,
             metric: str = "MRR", alpha: float = 0.05, seed: int = 0, progress: bool = False) -> dict:
    """The old gate, kept to show what it gets wrong: use ``choose``.

    It tests the sweep's best against the default on the half that picked it — the winner's curse: on
    null sweeps it moves off the default about one time in five (``benchmarks/bench_tuning_null.py``).

    Sweeps ``param_grid`` with ``run_fn(question_text, **setting)`` on the tuning
    half and keeps the best setting for ``metric`` — ties go to the first setting
    in grid order, so list each knob's default first. With ``default`` (one
    setting of the grid, e.g. the vector leg weighted 0: BM25 alone), the best
    replaces the default only if a paired test on the tuning half says it is
    better (p < ``alpha``): out of many settings one always looks better by
    luck, so a knob leaves its default only on evidence (``kept_default`` says
    which happened). The choice is then scored on the held-out half — beside
    ``baseline`` (a run function) with a paired test. Returns the setting, its
    score on both halves, the baseline's held-out score, the tests, the sweep (and, when the default
    was kept, the sweep's own best as ``sweep_best`` with its tuning score ``sweep_best_tune``).
    """
    from .metrics import METRICS, paired_test, per_question

    check_choice(metric, "metric", METRICS)
    if baseline is not None and not callable(baseline):
        raise BadArgument(f"baseline must be a run function (or None), not {type(baseline).__name__}")
    names, settings = _grid_settings(param_grid)  # the grid refused by name, before any ranking
    if default is not None:
        if not isinstance(default, dict) or set(default) != set(names) or default not in settings:
            raise BadArgument(f"default must be one setting of the grid (a value of each of {names}), not {default!r}")
    tune, held = halves(questions, seed=seed)
    frame = sweep(param_grid, run_fn, tune, metrics={metric: METRICS[metric]}, progress=progress)
    # The settings in the sweep's own order: a pandas row would turn the integers of a mixed row into floats.
    best = settings[int(frame[metric].values.argmax())]
    out = {"best": best, "tune": float(frame[metric].max()), "sweep": frame, "tune_questions": len(tune),
           "held_questions": len(held), "kept_default": False}
    if default is not None and best != default:
        on_tune = {name: per_question(lambda q, s=s: run_fn(q, **s), tune, METRICS[metric])
                   for name, s in (("default", default), ("best", best))}
        out["tune_test"] = paired_test(on_tune["default"], on_tune["best"])
        if not (out["tune_test"]["diff"] > 0 and out["tune_test"]["p"] < alpha):
            out.update(best=dict(default), kept_default=True, sweep_best=best, sweep_best_tune=out["tune"],
                       tune=mean(on_tune["default"].values()))
    chosen = lambda q: run_fn(q, **out["best"])
    held_scores = per_question(chosen, held, METRICS[metric])
    out["held"] = mean(held_scores.values())
    if baseline is not None:
        base_scores = per_question(baseline, held, METRICS[metric])
        out["baseline_held"] = mean(base_scores.values())
        out["test"] = paired_test(base_scores, held_scores)
    return out


# ---------------------------------------------------------------- the protocol: choose on some folds, decide on others

def choose(param_grid: dict, run_fn, questions: list[dict], *, default: dict, metric: str = "MRR",
           metrics: dict | None = None, folds: int = 5, repeats: int = 10, alpha: float = 0.05, seed: int = 0,
           final: bool = True, progress: bool = False) -> dict:
    """Choose a setting without fooling yourself: cross-validated on one half, scored once on the other.

    1. ``halves(questions, seed=seed)``: a development half and a final half, each kind divided evenly.
    2. On the development half, every setting of the grid ranks every question once.
    3. Repeated k-fold cross-validation (``folds`` × ``repeats``): in each fold, the best setting on the
       other folds (ties go to the default, then to grid order) is compared with the default on this
       fold's questions, which took no part in picking it. The gain is the mean of these out-of-fold
       gains; its spread, their standard deviation over the repeats.
    4. The decision: the default gives way only if the corrected repeated k-fold t-test (Nadeau and
       Bengio 2003, Bouckaert and Frank 2004) puts the gain above 0 (two-sided p < ``alpha``). A plain
       paired test would treat the folds as independent, but their training questions overlap: the same
       lucky setting is picked fold after fold, and its out-of-fold gains rise and fall together. The
       test widens the variance by n_test / n_train for that, and its interval is built the same way, so
       the two never disagree.
    5. The setting chosen is then the development half's best (or the default) and — with ``final=True``,
       once, for the setting you ship — it is scored on the final half against the default with a paired
       test. Explorations pass ``final=False``: a final half scored again and again, across sweeps and
       metrics, becomes a development half.

    ``metric`` decides (a name of ``METRICS`` or of ``metrics``, a dict of more metric functions whose
    scores are kept too: ``decide`` reads them to decide again for another metric or default, without
    ranking anything again). Returns ``best`` (the setting chosen), ``kept_default``, ``sweep_best`` (the
    development half's own best), ``cv`` (``gain``, ``ci95``, ``p``, ``sd_repeats``, ``fold_gains``,
    ``out_of_fold``: each development question's mean out-of-fold difference, ``picks``: which setting the
    folds picked), ``final`` (with ``final=True``: ``chosen``, ``default``, ``test``), ``sweep`` (each
    setting's means on the development half), ``scores`` and the sizes.
    """
    import pandas as pd

    settings, named = _checked(param_grid, run_fn, default, metric, metrics, alpha, final)
    folds, repeats = check_int(folds, "folds", low=2, high=50), check_int(repeats, "repeats", low=1, high=1000)
    development, held = halves(questions, seed=seed)
    if len(development) < 2 * folds:
        raise BadArgument(f"{len(development)} development questions cannot make {folds} folds of at least 2: "
                          "give more questions or fewer folds")
    scores = _score_matrix(settings, run_fn, development, {metric: named[metric], **(metrics or {})}, progress)
    out = {"settings": settings, "scores": scores, "development": [q["id"] for q in development],
           "kinds": [q.get("kind", "") for q in development], "folds": folds, "repeats": repeats, "seed": seed,
           "development_questions": len(development), "final_questions": len(held),
           "sweep": pd.DataFrame([{**st, **{m: float(v[i].mean()) for m, v in scores.items()}}
                                  for i, st in enumerate(settings)])}
    out.update(decide(out, metric=metric, default=default, alpha=alpha))
    if final:  # once, at the end, for the setting shipped
        chosen = per_question(lambda q: run_fn(q, **out["best"]), held, named[metric])
        base = per_question(lambda q: run_fn(q, **default), held, named[metric])
        out["final"] = {"chosen": mean(chosen.values()), "default": mean(base.values()),
                        "test": paired_test(base, chosen)}
    return out


def decide(result: dict, *, metric: str, default: dict, alpha: float = 0.05) -> dict:
    """The protocol's decision again, from ``choose``'s scores: for another metric, or from another default.

    Nothing is ranked again and the final half is not touched: the development half's scores are
    cross-validated anew (the same folds). Returns ``best``, ``kept_default``, ``sweep_best``,
    ``default``, ``metric`` and ``cv``, as ``choose`` does.
    """
    import numpy as np

    if not isinstance(result, Mapping) or "scores" not in result:
        raise BadArgument("result must be what tuning.choose returned")
    check_choice(metric, "metric", result["scores"])
    alpha = check_number(alpha, "alpha", low=1e-6, high=0.5)
    settings = result["settings"]
    if default not in settings:
        raise BadArgument(f"default must be one setting of the grid, not {default!r}"[:300])
    matrix, at_default = result["scores"][metric], settings.index(default)
    cv = _cross_validate(matrix, at_default, result["kinds"], result["folds"], result["repeats"], result["seed"])
    cv["picks"] = [{"setting": settings[i], "folds": n} for i, n in cv["picks"]]
    cv["out_of_fold"] = dict(zip(result["development"], cv.pop("out_of_fold")))
    top = _pick(matrix, np.arange(matrix.shape[1]), at_default)
    better = cv["gain"] > 0 and cv["p"] < alpha
    return {"best": dict(settings[top]) if better else dict(default), "kept_default": not better,
            "sweep_best": dict(settings[top]), "default": dict(default), "metric": metric, "cv": cv}


def _checked(param_grid, run_fn, default, metric, metrics, alpha, final) -> tuple[list[dict], dict]:
    """``choose``'s arguments, each refused by name: the grid's settings, and every metric by name."""
    names, settings = _grid_settings(param_grid)
    if not isinstance(default, dict) or set(default) != set(names) or default not in settings:
        raise BadArgument(f"default must be one setting of the grid (a value of each of {names}), not {default!r}"[:300])
    if not callable(run_fn):
        raise BadArgument(f"run_fn must be a function (question_text, **setting) → ranking, not {type(run_fn).__name__}")
    if metrics is not None and (not isinstance(metrics, Mapping) or not all(callable(m) for m in metrics.values())):
        raise BadArgument("metrics must be a dict of name → function(ranking, relevant), like metrics.METRICS")
    named = {**METRICS, **(metrics or {})}
    check_choice(metric, "metric", named)
    check_number(alpha, "alpha", low=1e-6, high=0.5)
    check_bool(final, "final")
    return settings, named


def _grid_settings(param_grid) -> tuple[list[str], list[dict]]:
    grid = check_grid(param_grid)
    names = list(grid)
    return names, [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def _score_matrix(settings, run_fn, questions, metrics, progress) -> dict:
    """metric → array (settings × questions): every setting ranks every question once, every metric reads it."""
    import numpy as np

    check_bool(progress, "progress")
    if progress:
        from ..core.display import progress as _progress
        settings = _progress(settings, desc="sweep")
    rows = {name: [] for name in metrics}
    for setting in settings:
        rankings = {q["id"]: run_fn(q["question"], **setting) for q in questions}
        for name, fn in metrics.items():
            values = per_question(rankings, questions, fn)
            rows[name].append([values[q["id"]] for q in questions])
    return {name: np.array(r, dtype=np.float64) for name, r in rows.items()}


def _pick(matrix, columns, default: int) -> int:
    """The best setting on these questions; a tie goes to the default, then to the first in grid order."""
    means = matrix[:, columns].mean(axis=1)
    return default if means[default] >= means.max() - 1e-12 else int(means.argmax())


def _cross_validate(matrix, default: int, kinds: list[str], folds: int, repeats: int, seed: int) -> dict:
    """Repeated k-fold « tune on the other folds, compare with the default on this one », and its test."""
    import numpy as np
    from scipy.special import stdtr, stdtrit  # Student's t, without scipy.stats' three seconds of import

    rng = random.Random(seed)
    n = matrix.shape[1]
    gains, per_repeat, picks, total = [], [], {}, np.zeros(n)
    for _ in range(repeats):
        order = []
        for kind in sorted(set(kinds)):  # each kind dealt round the folds, so every fold holds each kind
            group = [i for i, k in enumerate(kinds) if k == kind]
            rng.shuffle(group)
            order += group
        fold_of = np.empty(n, dtype=int)
        fold_of[order] = np.arange(n) % folds
        out_of_fold = np.empty(n)
        for f in range(folds):
            test, train = np.flatnonzero(fold_of == f), np.flatnonzero(fold_of != f)
            pick = _pick(matrix, train, default)
            picks[pick] = picks.get(pick, 0) + 1
            out_of_fold[test] = matrix[pick, test] - matrix[default, test]
            gains.append(float(out_of_fold[test].mean()))
        per_repeat.append(float(out_of_fold.mean()))
        total += out_of_fold
    g = np.array(gains)
    gain, jobs = float(g.mean()), len(g)
    # Nadeau and Bengio's correction: the variance of a mean over overlapping training sets is larger
    # than var / J, by the share of a fold's test questions in its training questions.
    se = float(np.sqrt((1 / jobs + 1 / (folds - 1)) * g.var(ddof=1)))
    if se == 0:
        p, half = (1.0 if gain <= 0 else 0.0), 0.0
    else:
        p = float(2 * stdtr(jobs - 1, -abs(gain) / se))
        half = float(stdtrit(jobs - 1, 0.975) * se)
    return {"gain": gain, "ci95": (gain - half, gain + half), "p": p, "folds": folds, "repeats": repeats,
            "sd_repeats": float(np.std(per_repeat, ddof=1)) if repeats > 1 else 0.0,
            "repeat_gains": per_repeat, "fold_gains": gains, "out_of_fold": (total / repeats).tolist(),
            "picks": sorted(picks.items(), key=lambda kv: (-kv[1], kv[0]))}


def _plain(value):
    """A pandas cell back to a plain Python value (numpy floats print as np.float64(…) otherwise)."""
    return value.item() if hasattr(value, "item") else value
