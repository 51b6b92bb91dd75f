"""How often does a tuning protocol call a sweep « better » when no setting is? The false alarms, measured.

A null sweep (``tests/doubles.coin_toss``): 30 settings, 80 questions with one
answering page each, every ranking a coin toss (the answer lands at a rank
drawn uniformly among 20). No setting is better than the default, so a test at
p < 0.05 should move off the default about once in twenty draws at most. For
each draw:

    protocol       tuning.choose: 5-fold × 10 repeats on the development half, the corrected
                   repeated k-fold t-test (the decision the collection uses)
    uncorrected    the same fold gains, tested as if the folds were independent (no n_test / n_train
                   term): what the correction is for
    old gate       tuning.held_out: the sweep's best against the default, paired test on the half
                   that picked it

Then the same with one setting that really is better (it puts the answer first on
40 % more of the questions): how often each finds it. The suite
(``tests/test_tuning.py``) checks the first two rates on fewer draws.

    .venv/bin/python benchmarks/bench_tuning_null.py [--draws 1000] [--old-draws 400]

Writes benchmarks/results/tuning_null.json. Cost: about a minute on one core.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "tests")]

from doubles import coin_toss  # noqa: E402
from rungs.lab import tuning  # noqa: E402
from rungs.lab.metrics import wilson  # noqa: E402  (the collection's one interval of a share)

DEFAULT = {"setting": 0}


def uncorrected(cv: dict) -> bool:
    """The fold gains read as independent: t = mean / (sd / √J), two-sided, Student's t with J − 1 df."""
    import numpy as np
    from scipy.special import stdtr

    g = np.array(cv["fold_gains"])
    sd = g.std(ddof=1)
    if sd == 0:
        return bool(g.mean() > 0)
    return bool(g.mean() > 0 and 2 * stdtr(len(g) - 1, -abs(g.mean()) / (sd / math.sqrt(len(g)))) < 0.05)


def rates(draws: int, old_draws: int, **better) -> dict:
    protocol = naive = old = 0
    for draw in range(draws):
        out = tuning.choose(*coin_toss(draw, **better), default=DEFAULT, final=False, seed=draw)
        protocol += out["best"] != DEFAULT
        naive += uncorrected(out["cv"]) and out["sweep_best"] != DEFAULT
    for draw in range(old_draws):
        old += tuning.held_out(*coin_toss(draw, **better), default=DEFAULT, seed=draw)["best"] != DEFAULT
    row = lambda k, n: {"better": k, "draws": n, "rate": k / n, "wilson95": wilson(k, n)}  # noqa: E731
    return {"protocol": row(protocol, draws), "uncorrected": row(naive, draws), "old gate": row(old, old_draws)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--old-draws", type=int, default=400)
    a = p.parse_args(argv)
    out = {"null": rates(a.draws, a.old_draws),
           "one setting better (lift 0.4)": rates(a.draws // 5, a.old_draws // 4, better=7, lift=0.4),
           "sweep": "30 settings × 80 questions, coin-toss rankings (tests/doubles.coin_toss)"}
    for case, rows in out.items():
        if case == "sweep":
            continue
        print(case)
        for name, r in rows.items():
            low, high = r["wilson95"]
            print(f"  {name:<12} « better » {r['better']:>4} of {r['draws']:<5} {100 * r['rate']:5.1f} %  "
                  f"(95 % {100 * low:.1f}–{100 * high:.1f} %)")
    (HERE / "results" / "tuning_null.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
