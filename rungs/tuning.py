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

from .evaluate import METRICS, evaluate


def split(questions: list[dict], *, seed: int = 0, answerable_only: bool = True) -> tuple[list, list]:
    """Two halves, shuffled with a fixed seed, each kind of question divided evenly between them."""
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

    names = list(param_grid)
    settings = [dict(zip(names, values)) for values in itertools.product(*(param_grid[n] for n in names))]
    if progress:
        # Plain text updated in place, not a tqdm widget: a saved widget shows « 0% » forever in a static view.
        from .display import progress as _progress
        settings_iter = _progress(settings, desc="sweep")
    else:
        settings_iter = settings
    rows = []
    for setting in settings_iter:
        scores = evaluate(lambda q, s=setting: run_fn(q, **s), questions, metrics or METRICS)
        rows.append({**setting, **{k: v for k, v in scores.items() if k not in ("questions", "skipped")}})
    return pd.DataFrame(rows)


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
    ax.scatter([best[1]], [best[0]], marker="*", s=200, color="white", edgecolors="black")
    for (i, j), v in zip(itertools.product(range(table.shape[0]), range(table.shape[1])), table.values.ravel()):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v < table.values.mean() else "black")
    ax.figure.colorbar(image, ax=ax, label=value)
    ax.set_title(title)
    return ax


def line(frame, x: str, values: list[str], *, ax=None, title: str = ""):
    """Metrics along one knob."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.2))
    for v in values:
        ax.plot(frame[x], frame[v], marker="o", label=v)
    ax.set_xlabel(x)
    ax.legend()
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return ax


def held_out(param_grid: dict, run_fn, questions: list[dict], *, baseline=None, metric: str = "MRR",
             seed: int = 0, progress: bool = False) -> dict:
    """Tune on one half, report on the other: the honest way to choose knobs for *your* collection.

    Sweeps ``param_grid`` with ``run_fn(question_text, **setting)`` on the tuning
    half, keeps the best setting for ``metric`` — ties go to the first setting in
    grid order, so list each knob's default first: a knob then moves away from
    its default only when the tuning half says so —
    and scores it on the held-out half — beside ``baseline`` (a run function,
    e.g. BM25 alone) with a paired test on the held-out questions. Returns the
    best setting, its score on both halves, the baseline's held-out score, the
    test, and the whole sweep.
    """
    from .evaluate import METRICS, paired_test, per_question

    tune, held = split(questions, seed=seed)
    frame = sweep(param_grid, run_fn, tune, metrics={metric: METRICS[metric]}, progress=progress)
    best_row = frame.loc[frame[metric].idxmax()]
    best = {k: _plain(best_row[k]) for k in param_grid}
    chosen = lambda q: run_fn(q, **best)
    out = {"best": best, "tune": float(best_row[metric]), "sweep": frame, "tune_questions": len(tune),
           "held_questions": len(held)}
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
