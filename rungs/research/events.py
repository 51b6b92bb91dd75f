"""What a research run says while it runs: events, collected (``ListSink``) or shown (``printing_sink``).

What it is for: a run takes a minute; a reader wants to see the plan, each
round's queries, the answer streaming, and every note, as they happen. The
loop emits plain dicts to a sink of your choosing: a list for a test or a
notebook that inspects them, or the printer below, which shows them as one
growing output. The kinds: ``status`` (a stage and what it does), ``delta``
(a checked sentence of the report, shown), ``withheld`` (a sentence that
failed a check, and why: never shown), ``restart`` (the next model starts the
report over) and ``withdrawn`` (no model is left: what was shown is not the
answer), ``checked`` (the quotes behind the citations, the sentences
withheld), ``follow_ups``, ``done``.

Cost: nothing.
"""

from __future__ import annotations

from ..core.display import LiveText


class ListSink(list):
    """Collects every event; what tests (and curious readers) use."""

    def __call__(self, event: dict) -> None:
        self.append(event)

    @property
    def text(self) -> str:
        """The answer as a reader saw it: deltas, restarted when a fallback model took over (or withdrawn)."""
        out = ""
        for e in self:
            if e["type"] in ("restart", "withdrawn"):
                out = ""
            elif e["type"] == "delta":
                out += e["text"]
        return out


def printing_sink(event: dict) -> None:
    """A live display for a notebook: status lines, then the answer as it streams.

    In a notebook it is ONE output that grows (``rungs.core.display.LiveText``): printed token by token, the
    saved notebook would hold one output per token, a column of fragments in any static view.
    """
    live = LiveText.per_cell()
    kind = event["type"]
    if kind == "status":
        live.write(f"· {event['stage']}: {event['detail']}\n")
    elif kind == "delta":
        live.write(event["text"])
    elif kind == "restart":
        live.write(f"\n[the answer restarts with the next model: {event['reason']}]\n\n")
    elif kind == "withdrawn":
        live.write(f"\n[withdrawn ({event['reason']}): nothing above is the answer]\n")
    elif kind == "checked":
        for q in event["quotes"]:
            live.write(f"\n  [{q['n']}] {q['source']}: « {q['text']} »")
        for w in event["withheld"]:
            said = w["text"] if len(w["text"]) <= 70 else w["text"][:69] + "…"
            live.write(f"\n  withheld: « {said} » — {w['reason']}")
        live.write("\n" if event["quotes"] or event["withheld"] else "")
    elif kind == "follow_ups":
        live.write("\n\nfollow-ups:\n" + "\n".join(f"  - {q}" for q in event["questions"]) + "\n")
    elif kind == "done":
        live.write(f"\n· done in {event['seconds']:.1f} s\n")
        live.close()
