"""The tuning lab's tools: split the questions, sweep the knobs, draw what the sweep found.

What it is for: choosing k1, b, the title weight or the fusion constant for
*your* documents — and knowing whether the choice holds on questions it was
not tuned on. A sweep is only honest with a held-out half: on 40 questions,
the best of 100 settings is partly luck.

Cost: one ranking per question per setting; with ``rungs.fastbm25`` a
setting of the handbook costs a few milliseconds.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping

from ..core.errors import BadArgument, check_bool, check_choice, check_int, check_names
from .metrics import METRICS, _check_questions, evaluate

#: The most settings one sweep may try: each costs a ranking per question, and a grid's size is a
#: product (five knobs of twenty values are 3.2 million settings — days, not a sweep).
MAX_SETTINGS = 10_000


def halves(questions: list[dict], *, seed: int = 0, answerable_only: bool = True) -> tuple[list, list]:
    """Two halves, shuffled with a fixed seed, each kind of question divided evenly between them."""
    # An integer seed: random.Random hashes anything else, and a NaN's hash changes from run to run.
    seed = check_int(seed, "seed")
    check_bool(answerable_only, "answerable_only")
    questions = _check_questions(questions)
    if any(not isinstance(q.get("kind", ""), str) for q in questions):
        raise BadArgument("a question's 'kind' must be text (lexical, paraphrase, unanswerable…)")
    pool = [q for q in questions if q["relevant"]] if answerable_only else list(questions)
    rng = random.Random(seed)
    tune, held = [], []
    for kind in sorted({q.get("kind", "") for q in pool}):
        group = sorted((q for q in pool if q.get("kind", "") == kind), key=lambda q: q["id"])
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

    table = frame.pivot_table(index=y, columns=x, values=value, aggfunc="max")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.8))
    image = ax.imshow(table.values, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(table.columns)), [f"{v:g}" for v in table.columns])
    ax.set_yticks(range(len(table.index)), [f"{v:g}" for v in table.index])
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


def held_out(param_grid: dict, run_fn, questions: list[dict], *, baseline=None, default: dict | None = None,
             metric: str = "MRR", alpha: float = 0.05, seed: int = 0, progress: bool = False) -> dict:
    """Tune on one half, report on the other: the honest way to choose knobs for *your* collection.

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
    names = list(param_grid)
    if default is not None:
        if not isinstance(default, dict) or set(default) != set(names) or \
                any(default[n] not in list(param_grid[n]) for n in names):
            raise BadArgument(f"default must be one setting of the grid (a value of each of {names}), not {default!r}")
    tune, held = halves(questions, seed=seed)
    frame = sweep(param_grid, run_fn, tune, metrics={metric: METRICS[metric]}, progress=progress)
    # The settings in the sweep's own order: a pandas row would turn the integers of a mixed row into floats.
    settings = [dict(zip(names, values)) for values in itertools.product(*(param_grid[n] for n in names))]
    best = settings[int(frame[metric].values.argmax())]
    out = {"best": best, "tune": float(frame[metric].max()), "sweep": frame, "tune_questions": len(tune),
           "held_questions": len(held), "kept_default": False}
    if default is not None and best != default:
        on_tune = {name: per_question(lambda q, s=s: run_fn(q, **s), tune, METRICS[metric])
                   for name, s in (("default", default), ("best", best))}
        out["tune_test"] = paired_test(on_tune["default"], on_tune["best"])
        if not (out["tune_test"]["diff"] > 0 and out["tune_test"]["p"] < alpha):
            out.update(best=dict(default), kept_default=True, sweep_best=best, sweep_best_tune=out["tune"],
                       tune=sum(on_tune["default"].values()) / max(1, len(on_tune["default"])))
    chosen = lambda q: run_fn(q, **out["best"])
    held_scores = per_question(chosen, held, METRICS[metric])
    out["held"] = sum(held_scores.values()) / len(held_scores) if held_scores else 0.0
    if baseline is not None:
        base_scores = per_question(baseline, held, METRICS[metric])
        out["baseline_held"] = sum(base_scores.values()) / len(base_scores) if base_scores else 0.0
        out["test"] = paired_test(base_scores, held_scores)
    return out


def _plain(value):
    """A pandas cell back to a plain Python value (numpy floats print as np.float64(…) otherwise)."""
    return value.item() if hasattr(value, "item") else value
