"""The stored abstention runs, read for a notebook: where an answer is lost, and what the gate buys.

What it is for: ``benchmarks/bench_abstain.py`` answers the judged questions
with the real model, system by system — closed book, the judged passages (an
oracle retriever), the shipped retriever in each mode, with the
sufficient-context gate's probability stored — and ``bench_abstain.py summary``
marks them into ``benchmarks/results/abstain.json``. Notebook 03 reads that
file, never the model: ``load`` finds it through ``rungs.core.paths`` and
checks its shape (``check_summary``; both live in ``abstention_summary``); ``baselines`` and ``losses`` put the four
baselines side by side and say how much is lost at retrieval, how much at
reading and what the gate changes; ``threshold_table`` gives the gate's
precision and recall of « answerable » at each threshold; ``choice_lines`` and
``grid_table`` say what the protocol chose on the deciding half and how the
choice fared, once, on the reporting half; ``floor_table`` puts the model
beside « copy », the floor that asks no model, with their paired test; ``plot_right`` and
``plot_thresholds`` draw them, each share with its Wilson interval
(``metrics.wilson``, at the usual 95 %).

A run is read as it stands: ``progress`` says, half by half, how many
questions each system has answered, and a table says « not run yet » or
« written once the deciding half is complete » rather than guess — a half
nobody ran is never filled in from the other. Taught in notebook 03,
« Where an answer is lost ».

Cost: reading one JSON file of a few kB; a plot, milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.display import Table
from ..core.errors import BadArgument, check_choice, check_int, check_number, check_text
from .abstention_summary import HALVES, SHARES, NoSummary, check_summary, load  # noqa: F401  (abstention.load too)
from .metrics import wilson  # noqa: F401  the collection's one interval of a share (abstention.wilson too)

#: The four baselines, in the order a reader follows the answer's loss: no passage, the right passages, the
#: passages the shipped retriever finds, and those behind the gate.
ROLES = ("closed book", "judged passages", "shipped retriever", "shipped retriever + gate")
#: The stored systems whose progress is counted (the gated ones are read from them: no run of their own).
RUN = ("pointing-lead", "free", "pointing-lead-norule", "free-norule", "oracle-pointing-lead", "oracle-free",
       "closed-book", "copy", "oracle-copy")
#: The model and the floor that asks none, on the same passages: each copy beside the model system it copies from.
FLOOR = (("pointing-lead", "copy"), ("oracle-pointing-lead", "oracle-copy"))


# ---------------------------------------------------------------- how far the runs got

def questions(summary: dict, half: str = "both") -> int:
    """How many judged questions the runs are for: a half's, or both halves' (``"both"``)."""
    summary = check_summary(summary)
    check_choice(half, "half", ("decide", "report", "both"))
    return sum(summary["halves"][h] for h in (("decide", "report") if half == "both" else (half,)))


def answered(summary: dict, system: str, half: str = "both") -> int:
    """How many questions ``system`` has answered so far, on one half or both (0 for a system not run yet)."""
    summary = check_summary(summary)
    check_text(system, "system", max_chars=100)
    check_choice(half, "half", ("decide", "report", "both"))
    if half == "both":
        return int((summary.get("complete") or {}).get(system, 0))
    return int(_measures(summary, system, half).get("n", 0))


def is_complete(summary: dict) -> bool:
    """Has every system counted in the summary answered every question of both halves?"""
    summary = check_summary(summary)
    done = summary.get("complete") or {}
    return bool(done) and all(n >= questions(summary) for n in done.values())


def progress(summary: dict) -> str:
    """Half by half, how many questions each stored system has answered (« not run yet » where none);
    "" once every system has answered every question."""
    summary = check_summary(summary)
    if is_complete(summary):
        return ""
    done = summary.get("complete") or {}
    counted = [s for s in RUN if s in done] or sorted(done)

    def said(system, half):
        n, total = answered(summary, system, half), questions(summary, half)
        return f"{n} of {total}" if n else "not run yet"
    lines = [f"  {s:<22} deciding half {said(s, 'decide'):<12} reporting half {said(s, 'report')}"
             if done.get(s) else f"  {s:<22} not run yet" for s in counted]
    return "the stored runs as they stand, questions answered:\n" + "\n".join(lines)


# ---------------------------------------------------------------- the baselines, and where the answer is lost

def _measures(summary: dict, system: str | None, half: str) -> Mapping:
    return ((summary["systems"].get(system) or {}).get(half) or {}) if system else {}


def _gated(summary: dict, mode: str) -> str | None:
    """The gate's row for ``mode``: the protocol's choice if it is of this mode, else none yet."""
    chosen = summary.get("chosen")
    return chosen if chosen and chosen.split(", gate")[0] == mode else None


def baselines(summary: dict, *, mode: str = "pointing-lead", half: str = "report") -> list[dict]:
    """The four baselines on one half, in ``ROLES``' order: each its ``role``, ``system`` (None: not chosen yet),
    and the measures stored for it (``n`` 0 and the shares None for a system not run yet)."""
    summary = check_summary(summary)
    check_text(mode, "mode", max_chars=60)
    check_choice(half, "half", HALVES)
    systems = ("closed-book", f"oracle-{mode}", mode, _gated(summary, mode))
    rows = []
    for role, system in zip(ROLES, systems):
        m = _measures(summary, system, half)
        rows.append({"role": role, "system": system, "n": m.get("n", 0),
                     **{k: m.get(k) for k in (*SHARES, "unsupported_shown")}})
    return rows


def _less(a, b):
    return None if a is None or b is None else a - b


def losses(summary: dict, *, mode: str = "pointing-lead", half: str = "report") -> dict:
    """Where the answer is lost, in share right of the answerable questions: ``at retrieval`` (the judged
    passages less the shipped retriever's), ``at reading`` (all of it less the judged passages'), and what
    ``the gate`` changes in share right of every question (None where a baseline is not run yet)."""
    _, oracle, shipped, gated = baselines(summary, mode=mode, half=half)
    return {"at retrieval": _less(oracle["right_answerable"], shipped["right_answerable"]),
            "at reading": _less(1.0, oracle["right_answerable"]),
            "the gate": _less(gated["right"], shipped["right"])}


def _cell(value, width: int = 9) -> str:
    if value is None:
        return f"{'—':>{width}}"
    return f"{value:>{width}.3f}" if isinstance(value, float) else f"{value:>{width}}"


def loss_lines(summary: dict, *, mode: str = "pointing-lead", half: str = "report") -> list[str]:
    """``losses`` in words, one line each (« — » where a baseline is not run yet)."""
    gated = baselines(summary, mode=mode, half=half)[3]["system"]
    loss, chosen = losses(summary, mode=mode, half=half), summary.get("chosen")
    if gated == mode:
        return [*_loss_lines(loss)[:2], "what the gate changes: nothing — the protocol kept no gate (threshold 0)"]
    missing_gate = "a baseline not run yet" if gated else (f"the protocol chose {chosen}, another mode" if chosen
                                                            else "the gate not chosen yet")

    return _loss_lines(loss, missing_gate)


def _loss_lines(loss: dict, missing_gate: str = "a baseline not run yet") -> list[str]:
    def said(key, missing="a baseline not run yet"):
        return f"— ({missing})" if loss[key] is None else f"{loss[key]:+.3f}"
    return [f"lost at retrieval, share right of the answerable (judged passages − shipped): {said('at retrieval')}",
            f"lost at reading, share right of the answerable (all − judged passages):       {said('at reading')}",
            f"what the gate changes, share right of every question (with − without):       "
            f"{said('the gate', missing_gate)}"]


def floor_table(summary: dict, *, half: str = "report") -> Table:
    """The model beside the floor: pointing-lead and « copy » on the same passages (the shipped retriever's,
    then the judged ones), copy behind the gate at the thresholds the summary holds, and under them the paired
    test of each copy against the model it stands beside (share right of the answerable, Holm over the measures)."""
    summary = check_summary(summary)
    check_choice(half, "half", HALVES)
    shown = [n for pair in FLOOR for n in pair]
    shown[2:2] = sorted(n for n in summary["systems"] if n.startswith("copy, gate "))
    lines = [f"{'system':<26} {'answers':>7} {'right':>6} {'right':>6} {'idk':>6} {'wrong':>6} {'cited':>6}",
             f"{'':<26} {'':>7} {'(all)':>6} {'(ans.)':>6} {'(unan.)':>6} {'idk':>6} {'prec.':>6}"]
    for name in shown:
        m = _measures(summary, name, half)
        label = name + (" (no model)" if name in ("copy", "oracle-copy") else "")
        lines.append(f"{label:<26} {'not run yet':>7}" if not m.get("n") else
                     f"{label:<26} {m['n']:>7}" + "".join(_cell(m.get(k), 7) for k in SHARES))
    for model, floor in FLOOR:
        t = ((summary.get("paired_floor") or {}).get(floor) or {}).get(half, {}).get("right_answerable")
        if t:
            lines.append(f"  {floor} − {model}, right (answerable), paired on {t['n']}: {t['diff']:+.3f} "
                         f"[{t['ci95'][0]:+.3f}, {t['ci95'][1]:+.3f}], p Holm {t['p_holm']:.3f}, "
                         f"{t['improved']} better / {t['degraded']} worse")
    return Table("\n".join(lines))


def baselines_table(summary: dict, *, mode: str = "pointing-lead", half: str = "report") -> Table:
    """The baselines side by side: answers, right (all, answerable), « je ne sais pas » (idk) where nothing
    answers and where something does (wrong idk), citation precision, figures shown unsupported."""
    lines = [f"{'baseline':<25} {'system':<24} {'answers':>7} {'right':>6} {'right':>6} {'idk':>6} {'wrong':>6} "
             f"{'cited':>6} {'unsup.':>6}",
             f"{'':<25} {'':<24} {'':>7} {'(all)':>6} {'(ans.)':>6} {'(unan.)':>6} {'idk':>6} {'prec.':>6} "
             f"{'figure':>6}"]
    chosen = check_summary(summary).get("chosen")
    for r in baselines(summary, mode=mode, half=half):
        system = r["system"] or (f"gate: {chosen} chosen" if chosen else "gate: not chosen yet")
        if r["role"] == ROLES[3] and r["system"] == mode:  # the protocol chose the gate at 0: no gate at all
            system = f"{mode} (no gate)"
        if not r["n"]:
            lines.append(f"{r['role']:<25} {system:<24} {'not run yet' if r['system'] else ''}".rstrip())
            continue
        lines.append(f"{r['role']:<25} {system:<24} {r['n']:>7}" + "".join(_cell(r[k], 7) for k in (
            *SHARES, "unsupported_shown")))
    return Table("\n".join(lines))


# ---------------------------------------------------------------- the gate's threshold, and the protocol's choice

def threshold_table(summary: dict, system: str = "pointing-lead") -> Table:
    """The gate's threshold table: at each threshold, the questions whose P(yes) passes it, and the precision
    and recall of « answerable » among them (from stored probabilities: no model)."""
    summary = check_summary(summary)
    check_text(system, "system", max_chars=100)
    rows = (summary.get("thresholds") or {}).get(system)
    if not rows:
        return Table(f"(the threshold table of {system} is written once the deciding half is complete: "
                     f"{answered(summary, system, 'decide')} of its {questions(summary, 'decide')} questions "
                     "answered so far)")
    lines = [f"{system}, over the {answered(summary, system)} questions it answered:",
             f"{'threshold':>9} {'passes':>7} {'precision':>9} {'recall':>9}"]
    lines += [f"{r['threshold']:>9.1f} {r['passes']:>7} {_cell(r['precision'])} {_cell(r['recall'])}" for r in rows]
    return Table("\n".join(lines))


def _signed(t: Mapping) -> str:
    low, high = t["ci95"]
    return f"{t['diff' if 'diff' in t else 'gain']:+.3f} [{low:+.3f}, {high:+.3f}]"


def choice_lines(summary: dict) -> list[str]:
    """What the protocol chose among modes × gate on the deciding half, and how it fared on the reporting half
    (« not run yet » while that half has not been answered)."""
    summary = check_summary(summary)
    choice = summary.get("choice")
    if not choice:
        done = min((_measures(summary, s, "decide").get("n", 0) for s in ("pointing-lead", "free")), default=0)
        return [f"the protocol chooses once pointing-lead and free have answered the whole deciding half: "
                f"{done} of {summary['halves']['decide']} so far"]
    best, cv = choice["best"], choice["cv"]
    chosen = f"{best['system']}, gate {best['gate']:.1f}"
    kept = "the default kept" if choice["kept_default"] else "the default given way"
    out = [f"chosen on the deciding half: {chosen} ({kept})",
           f"  cross-validated gain over the default: {_signed(cv)}, p {cv['p']:.3f}"]
    paired = summary.get("paired") or {}
    test = (paired.get(chosen) or {}).get("report", {}).get("right")
    if test:
        out.append(f"  on the reporting half, once: share right {_signed(test)} against pointing-lead without the "
                   f"gate, p {test['p']:.3f}, p Holm {test['p_holm']:.3f}, {test['improved']} better / "
                   f"{test['degraded']} worse of {test['questions']}")
    elif not answered(summary, best["system"], "report"):
        out.append("  on the reporting half: not run yet (the choice is not confirmed until it is)")
    elif best["gate"] == 0.0:  # no gate chosen: the reporting half holds the default itself, nothing to compare
        m = _measures(summary, best["system"], "report")
        out.append(f"  on the reporting half, once: {best['system']} without a gate, share right "
                   f"{_cell(m.get('right'), 0).strip()} on {m.get('n', 0)} questions")
    fixed = [(name, (t.get("report") or {}).get("right")) for name, t in paired.items()
             if name.startswith(f"{best['system']}, gate ") and name != chosen]
    fixed = [(name, t) for name, t in fixed if t]
    if fixed:
        out.append(f"the gate at fixed thresholds on the reporting half, for reading (not chosen), against "
                   f"{best['system']} without it:")
        out += [f"  {name:<26} share right {_signed(t)}, p Holm {t['p_holm']:.3f}, {t['improved']} better / "
                f"{t['degraded']} worse of {t['questions']}" for name, t in fixed]
    return out


def grid_table(summary: dict) -> Table:
    """The protocol's grid on the deciding half: share right of each mode (rows) at each gate threshold."""
    summary = check_summary(summary)
    sweep = (summary.get("choice") or {}).get("sweep")
    if not sweep:
        return Table("(the grid is written once the deciding half is complete)")
    gates = sorted({r["gate"] for r in sweep})
    modes = list(dict.fromkeys(r["system"] for r in sweep))
    right = {(r["system"], r["gate"]): r["right"] for r in sweep}
    lines = [f"{'mode':<22}" + "".join(f"{g:>7.1f}" for g in gates)]
    lines += [f"{m:<22}" + "".join(_cell(right.get((m, g)), 7) for g in gates) for m in modes]
    return Table("\n".join(lines))


# ---------------------------------------------------------------- drawn, each share with its interval

def _axes(ax):
    from matplotlib.axes import Axes

    if ax is not None and not isinstance(ax, Axes):
        raise BadArgument(f"ax must be a matplotlib Axes (or None for a new figure), not {type(ax).__name__}")
    return ax


def _check_rows(rows) -> list[Mapping]:
    if not isinstance(rows, (list, tuple)):
        raise BadArgument(f"rows must be a list of baselines (what abstention.baselines returns), "
                          f"not {type(rows).__name__}")
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping):
            raise BadArgument(f"rows[{i}] must be a baseline's row (a dict), not {type(r).__name__}")
        try:
            check_int(r.get("n", 0), "n", low=0)
            if r.get("right") is not None:
                check_number(r["right"], "right", low=0.0, high=1.0)
        except BadArgument:
            raise BadArgument(f"rows[{i}] must hold 'n', a whole number, and 'right', None or a share from 0 to 1 "
                              "(what abstention.baselines returns)") from None
    return list(rows)


def plot_right(rows: list[dict], *, ax=None, title: str = ""):
    """Each row's share right as a bar, with its 95 % Wilson interval (rows as ``baselines`` gives them; those
    not run yet are left out). Returns the axes."""
    import matplotlib.pyplot as plt

    rows, ax = _check_rows(rows), _axes(ax)
    check_text(title, "title", max_chars=200)
    drawn = [r for r in rows if r.get("n") and r.get("right") is not None]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * max(len(drawn), 1)))
    shares = [r["right"] for r in drawn]
    bounds = [wilson(round(r["right"] * r["n"]), r["n"]) for r in drawn]
    ys = list(range(len(drawn)))
    ax.barh(ys, shares, color="#9ab", height=0.6)
    ax.errorbar(shares, ys, xerr=[[s - lo for s, (lo, _) in zip(shares, bounds)],
                                  [hi - s for s, (_, hi) in zip(shares, bounds)]],
                fmt="none", ecolor="black", capsize=3)
    ax.set_yticks(ys, [f"{r.get('role', '')} ({r.get('system')}), n = {r['n']}" for r in drawn])
    ax.invert_yaxis()  # the first baseline on top, as the table reads
    ax.set_xlim(0, 1)
    ax.set_xlabel("share right, with its 95 % Wilson interval")
    if title:
        ax.set_title(title)
    return ax


def plot_thresholds(summary: dict, system: str = "pointing-lead", *, ax=None):
    """The gate's curve: precision and recall of « answerable » against the threshold. Returns the axes."""
    import matplotlib.pyplot as plt

    summary, ax = check_summary(summary), _axes(ax)
    check_text(system, "system", max_chars=100)
    rows = (summary.get("thresholds") or {}).get(system) or []
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3))
    ts = [r["threshold"] for r in rows]
    nan = float("nan")  # where nothing passes there is no precision: a gap in the line, not a 0
    ax.plot(ts, [nan if r["precision"] is None else r["precision"] for r in rows], "o-",
            label="precision of « answerable »")
    ax.plot(ts, [nan if r["recall"] is None else r["recall"] for r in rows], "s--", label="recall of « answerable »")
    ax.set_xlabel("threshold on P(the extracts answer)")
    ax.set_ylabel("share (precision, recall)")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"the gate, {system}" + ("" if rows else ": not written yet"))
    ax.legend(loc="lower left")
    return ax
