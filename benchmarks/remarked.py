"""What moved when every stored answer was marked again (issue 38): the figures before and after, side by side.

The summaries are computed from the stored runs by the mark of their day; this script reads a summary as it
was committed before the new mark (``git show REV:benchmarks/results/NAME``) and as it is now, and keeps the
headline figures of both: pointing-lead and the judged passages on each half, the folder.

    git show 2dd7d48:benchmarks/results/abstain.json > /tmp/abstain.before.json
    .venv/bin/python benchmarks/remarked.py /tmp/abstain.before.json   # writes results/remarked.json

Cost: reading two JSON files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOW = HERE / "results" / "abstain.json"
OUT = HERE / "results" / "remarked.json"
#: The figures kept: (where in the summary, which measure).
KEPT = [(("systems", s, h), m) for s in ("pointing-lead", "oracle-pointing-lead") for h in ("decide", "report")
        for m in ("right", "right_answerable")] + [(("folder", "pointing-lead"), m)
                                                   for m in ("right", "right_answerable", "citation_precision")]


def _at(summary: dict, path: tuple) -> dict:
    for key in path:
        summary = summary[key]
    return summary


def moved(before: dict, now: dict) -> list[dict]:
    return [{"where": " / ".join(path), "measure": m, "before": round(_at(before, path)[m], 3),
             "now": round(_at(now, path)[m], 3)} for path, m in KEPT]


if __name__ == "__main__":
    rows = moved(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")), json.loads(NOW.read_text(encoding="utf-8")))
    OUT.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for r in rows:
        print(f"{r['where']:<40} {r['measure']:<20} {r['before']:.3f} → {r['now']:.3f}")
