"""One printer of an answer: the lines a reader is shown, for the notebooks, ``python -m rungs ask`` and the benchmarks.

What it is for: an ``Answer`` is shown in one wording wherever it is shown — its status and text, each quote
with the passage it comes from (file and page when the retriever's hit says them), what it cited and the
figures held, the gate's and the decision's probabilities with their thresholds (and the coverage the
decision was set for), the notes, the cost. ``Answer.lines()`` and ``print(answer)`` call it; the command
line prints these lines as they are and adds only what a terminal has beside them (links that open the
file at its page, the passages read). Two printers disagreed (« answer: » and « answer:   », a decision
the notebook never showed); one cannot.

Also the two ways a probability is printed beside its threshold (``figures_of``) and a coverage as a share
(``share_said``), which the refusals' messages share. Cost: nothing (text). Taught in notebook 03, used in
04, 05 and 07.
"""

from __future__ import annotations

from ..core.display import where

#: The word each status is shown with (``Status`` values are the ones the trace and the JSON store).
HEADS = {"answered": "answer", "no answer": "no answer", "unavailable": "unavailable", "refused": "refused"}


def figures_of(p: float, threshold: float) -> tuple[str, str]:
    """P and the threshold as printed beside the gate's decision: two decimals, or as many more as it takes
    for two unequal values to print unequal (a P(yes) a hair below the threshold is printed with the digits
    that show it below, never as the threshold's own figure beside « below it »)."""
    for places in range(2, 18):
        shown = f"{p:.{places}f}", f"{threshold:.{places}f}"
        if shown[0] != shown[1] or p == threshold:
            return shown
    return repr(float(p)), repr(float(threshold))  # 17 decimals apart only: every digit there is


def share_said(coverage: float) -> str:
    """A coverage as a message prints it: a percentage, unless that would round a share that is not 0 or 1 to
    « 0% » or « 100% » (a coverage of 1e-300 answers the one question ranked first, not none)."""
    shown = f"{coverage:.0%}"
    return shown if shown not in ("0%", "100%") or coverage in (0, 1) else f"{coverage:.3g}"


def place(answer, source: str) -> str:
    """Where a cited passage is found again: its file and page when the hit it came from says them, else its id."""
    hit = next((h for h in answer.hits if h.id == source), None)
    return source if hit is None else where(hit)


def verdicts(answer) -> list[str]:
    """The gate's and the decision's readings, whichever way they went, each with its probability and threshold."""
    out, gate, decided = [], answer.gate, answer.decision
    if gate and gate.p is not None and gate.threshold is not None:
        went = "below it: « je ne sais pas », nothing more was asked" if gate.closed else "the answer went on"
        p, threshold = figures_of(gate.p, gate.threshold)
        out.append(f"  gate: P(the passages answer the question) = {p}, threshold {threshold}: {went}")
    elif gate and gate.p is not None:
        out.append(f"  gate: P(the sentences answer the question) = {gate.p:.2f}, one of the decision's signals")
    if decided:
        p, threshold = figures_of(decided.p, decided.threshold)
        went = "the sentences are shown" if decided.shown else "below it: « je ne sais pas »"
        out.append(f"  decision: P(the copy is right) = {p}, threshold {threshold} (set to answer "
                   f"{share_said(decided.coverage)} of the questions it was fitted on): {went}")
        if decided.source:
            out.append(f"    from {decided.source}")
    return out


def answer_lines(answer) -> list[str]:
    """The answer as a reader sees it: status and text, each quote under it with its place, what was checked,
    the gate's and the decision's readings, the notes, the cost (raw text: ``safe_text`` it before a terminal)."""
    head = HEADS[answer.status.value]
    out = [f"{head}: {answer.text}" if answer.text else f"{head}: {answer.reason}"]
    for n, q in enumerate(answer.quotes, 1):
        out.append(f"  [{n}] « {q.text} » ({place(answer, q.source)})")
    if answer.answered:
        out.append(f"  cited: {', '.join(place(answer, s) for s in answer.cited) or 'nothing'} "
                   f"(of {len(answer.sent)} sent)")
        held = [f"{f.figure} ✓" if f.supported else f"{f.figure} ✗" for f in answer.figures]
        if held:
            out.append("  figures: " + ", ".join(held))
    elif answer.text and answer.reason:  # « je ne sais pas », and what said it (the gate, the decision)
        out.append(f"  why: {answer.reason}")
    out += verdicts(answer)
    out += [f"  note: {n}" for n in answer.notes]
    out.append(f"  cost: {answer.cost}")
    return out
