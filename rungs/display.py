"""The one way a ranking is shown: fixed-width text a checked cell can compare, and a bump chart.

Every rung returns rankings as lists of ``rungs.retrieval.Hit`` (``id``,
``score``, ``title``, and ``parts`` that explain the score); this module is
where they become something a reader looks at. Scores are printed to 3 decimals so that a checked cell
compares stable text, not the last bits of a float.
"""

from __future__ import annotations

from typing import Iterable, Sequence


def _cut(text: str, width: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


class Table(str):
    """Text that shows as itself (no quotes) when Jupyter or a widget displays it."""

    def __repr__(self) -> str:
        return str(self)


def ranking_table(ranking: Sequence[dict], *, title_width: int = 44, id_width: int = 28) -> str:
    """Rank, id, score (3 decimals) and title, one line per result."""
    if not ranking:
        return Table("(no results)")
    lines = [f"{'#':>2}  {'id':<{id_width}} {'score':>8}  title"]
    for rank, r in enumerate(ranking, start=1):
        lines.append(f"{rank:>2}  {_cut(r['id'], id_width):<{id_width}} {r['score']:>8.3f}  "
                     f"{_cut(r.get('title', ''), title_width)}")
    return Table("\n".join(lines))


def show(ranking: Sequence[dict], **options) -> None:
    """Print ``ranking_table``."""
    print(ranking_table(ranking, **options))


def parts_table(hit) -> str:
    """What each part (a query word, a leg, a passage) contributed to one hit; the parts add up to its score.

    A hit without parts says why it has none, instead of pretending.
    """
    parts = hit["parts"]
    if parts is None:
        return Table(f"{hit['id']}  score {hit['score']:.3f}  (no parts: {hit['why']})")
    lines = [f"{hit['id']}  score {hit['score']:.3f} ="]
    for name, part in parts.items():
        lines.append(f"    {part:>8.3f}  {name}")
    return Table("\n".join(lines))


def _move(rank_before: int | None, rank_after: int) -> str:
    if rank_before is None:
        return "new"
    delta = rank_before - rank_after
    return "=" if delta == 0 else (f"↑{delta}" if delta > 0 else f"↓{-delta}")


def side_by_side(before: Sequence[dict], after: Sequence[dict], *,
                 labels: tuple[str, str] = ("before", "after"), id_width: int = 26) -> str:
    """Two rankings next to each other; the right one says how each page moved (↑2, ↓1, =, new)."""
    before_rank = {r["id"]: i for i, r in enumerate(before, start=1)}
    width = id_width + 11
    lines = [f"{'':>2}  {labels[0]:<{width}}  {labels[1]}"]
    for i in range(max(len(before), len(after))):
        left = right = ""
        if i < len(before):
            r = before[i]
            left = f"{_cut(r['id'], id_width):<{id_width}} {r['score']:>8.3f}"
        if i < len(after):
            r = after[i]
            right = (f"{_cut(r['id'], id_width):<{id_width}} {r['score']:>8.3f}  "
                     f"{_move(before_rank.get(r['id']), i + 1)}")
        lines.append(f"{i + 1:>2}  {left:<{width}}  {right}".rstrip())
    if not before and not after:
        lines.append("    (no results on either side)")
    return "\n".join(lines)


def compare(before: Sequence[dict], after: Sequence[dict], **options) -> None:
    """Print ``side_by_side``."""
    print(side_by_side(before, after, **options))


def bump_chart(rankings: dict, *, top: int = 5, ax=None, title: str = "", xlabel: str = ""):
    """Ranks across a knob's values: one line per page that reaches the top ``top`` anywhere.

    ``rankings`` maps each value of the knob to the ranking it produced.
    """
    import matplotlib.pyplot as plt

    values = list(rankings)
    pages = sorted({r["id"] for ranking in rankings.values() for r in ranking[:top]})
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    for page in pages:
        ranks = []
        for v in values:
            ids = [r["id"] for r in rankings[v]]
            # A page that fell below the chart sits one step under the last rank.
            ranks.append(ids.index(page) + 1 if page in ids[:top] else top + 1)
        ax.plot(range(len(values)), ranks, marker="o")
        ax.annotate(page, (len(values) - 1, ranks[-1]), xytext=(6, 0),
                    textcoords="offset points", va="center", fontsize=8)
    ax.set_xticks(range(len(values)), [str(v) for v in values])
    ax.set_yticks(range(1, top + 2), [str(i) for i in range(1, top + 1)] + [f">{top}"])
    ax.invert_yaxis()
    ax.set_ylabel("rank")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.margins(x=0.05)
    ax.figure.subplots_adjust(right=0.72)
    return ax
