"""The stored abstention runs' summary, found and checked once at each door: what ``rungs.lab.abstention`` reads.

``benchmarks/bench_abstain.py summary`` writes ``benchmarks/results/abstain.json``;
``load`` finds it through ``rungs.core.paths`` (a workshop copy has it too) and
``check_summary`` checks every part ``abstention`` reads — halves, each
system's measures, progress counts, the threshold tables, the protocol's
choice and the paired tests it quotes — so a damaged or hand-edited file is
one ``NoSummary`` or ``BadArgument`` naming the part, never a KeyError three
calls later. Taught in notebook 03, « Where an answer is lost ».

Cost: reading one JSON file of a few kB.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..core.errors import BadArgument, RungsError
from . import stored

#: The summary's halves and its whole.
HALVES = ("decide", "report", "all")
#: The shares a system's measures hold (each None where nothing was there to count).
SHARES = ("right", "right_answerable", "idk_unanswerable", "wrong_idk", "citation_precision")


class NoSummary(RungsError, LookupError):
    """``results/abstain.json`` is missing or unreadable: ``benchmarks/bench_abstain.py summary`` writes it."""


def load(path=None) -> dict:
    """The summary of the stored runs (``benchmarks/results/abstain.json``, or ``path``), its shape checked."""
    remake = "benchmarks/bench_abstain.py summary (it marks the stored answers, no model)"
    return stored.read_json(path, name="abstain.json", what="the abstention runs' summary", remake=remake,
                            error=NoSummary, check=check_summary)


def _fail(where: str, what: str):
    raise BadArgument(f"summary{where} must be {what}: pass what abstention.load() returns")


def _whole(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        _fail(where, "a whole number of 0 or more")
    return value


def _share(value, where: str, *, low: float = 0.0, high: float = 1.0):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        _fail(where, f"None or a number from {low:g} to {high:g}")
    return value


def _mapping(value, where: str, *, optional: bool = False) -> Mapping:
    if value is None and optional:
        return {}
    if not isinstance(value, Mapping):
        _fail(where, "a dict")
    return value


def _check_measures(m, where: str) -> None:
    _mapping(m, where)
    _whole(m.get("n", 0), f"{where}['n']")
    for key in SHARES:
        _share(m.get(key), f"{where}[{key!r}]")
    if m.get("unsupported_shown") is not None:
        _whole(m["unsupported_shown"], f"{where}['unsupported_shown']")


def _check_test(t, where: str) -> None:
    _mapping(t, where)
    _share(t.get("diff", t.get("gain")), f"{where}['diff']", low=-1.0)
    ci = t.get("ci95")
    if not isinstance(ci, (list, tuple)) or len(ci) != 2:
        _fail(f"{where}['ci95']", "a pair of numbers")
    for i, x in enumerate(ci):
        _share(x, f"{where}['ci95'][{i}]", low=-1.0)
    for key in ("p", "p_holm"):
        _share(t.get(key), f"{where}[{key!r}]")


def check_summary(summary) -> dict:
    """The summary, every part this module reads checked (halves, systems' measures, progress counts, the
    threshold tables, the protocol's choice and the paired tests it quotes); else a ``BadArgument`` naming
    the part."""
    _mapping(summary, "")
    halves = _mapping(summary.get("halves"), "['halves']")
    for h in ("decide", "report"):
        _whole(halves.get(h), f"['halves'][{h!r}]")
    for name, system in _mapping(summary.get("systems"), "['systems']").items():
        system = _mapping(system, f"['systems'][{name!r}]")
        for h in (h for h in HALVES if h in system):
            _check_measures(system[h], f"['systems'][{name!r}][{h!r}]")
    for name, n in _mapping(summary.get("complete"), "['complete']", optional=True).items():
        _whole(n, f"['complete'][{name!r}]")
    for name, rows in _mapping(summary.get("thresholds"), "['thresholds']", optional=True).items():
        if not isinstance(rows, list):
            _fail(f"['thresholds'][{name!r}]", "a list of rows")
        for i, r in enumerate(rows):
            where = f"['thresholds'][{name!r}][{i}]"
            _share(_mapping(r, where).get("threshold"), f"{where}['threshold']")
            _whole(r.get("passes"), f"{where}['passes']")
            _share(r.get("precision"), f"{where}['precision']")
            _share(r.get("recall"), f"{where}['recall']")
    if summary.get("chosen") is not None and not isinstance(summary["chosen"], str):
        _fail("['chosen']", "None or a system's name")
    choice = _mapping(summary.get("choice"), "['choice']", optional=True)
    if choice:
        best = _mapping(choice.get("best"), "['choice']['best']")
        if not isinstance(best.get("system"), str):
            _fail("['choice']['best']['system']", "a system's name")
        _share(best.get("gate"), "['choice']['best']['gate']")
        if not isinstance(choice.get("kept_default"), bool):
            _fail("['choice']['kept_default']", "True or False")
        _check_test(choice.get("cv"), "['choice']['cv']")
        sweep = choice.get("sweep", [])
        if not isinstance(sweep, list):
            _fail("['choice']['sweep']", "a list of rows")
        for i, r in enumerate(sweep):
            if not isinstance(_mapping(r, f"['choice']['sweep'][{i}]").get("system"), str):
                _fail(f"['choice']['sweep'][{i}]['system']", "a system's name")
            _share(r.get("gate"), f"['choice']['sweep'][{i}]['gate']")
            _share(r.get("right"), f"['choice']['sweep'][{i}]['right']")
    for name, by_half in _mapping(summary.get("paired"), "['paired']", optional=True).items():
        right = _mapping(_mapping(by_half, f"['paired'][{name!r}]").get("report"),
                         f"['paired'][{name!r}]['report']", optional=True).get("right")
        if right is not None:
            where = f"['paired'][{name!r}]['report']['right']"
            _check_test(right, where)
            for key in ("improved", "degraded", "questions"):
                _whole(right.get(key), f"{where}[{key!r}]")
    for name, by_half in _mapping(summary.get("paired_floor"), "['paired_floor']", optional=True).items():
        for h, tests in _mapping(by_half, f"['paired_floor'][{name!r}]").items():
            t = _mapping(tests, f"['paired_floor'][{name!r}][{h!r}]").get("right_answerable")
            if t is not None:  # the floor's test, as floor_table quotes it
                where = f"['paired_floor'][{name!r}][{h!r}]['right_answerable']"
                _check_test(t, where)
                for key in ("improved", "degraded", "n"):
                    _whole(t.get(key), f"{where}[{key!r}]")
    return summary
