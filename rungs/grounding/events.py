"""What an answer says while it is made: the one event type of N3 and N5, collected (``ListSink``) or shown.

What it is for: an answer takes seconds (N3) or a minute (N5); a reader wants
to see it come. Both rungs tell a sink of your choosing one kind of event, a
plain dict ``{"type": kind, …fields}``, made by ``event`` and checked by
``check_event`` against ``KINDS``, the one vocabulary:

- N3 (``rag.answer(sink=…)``, ``python -m rungs ask``): ``reading`` (the
  prompt's ``tokens`` and numbered ``sentences``, before the call), ``writing``
  (the first token), ``sentence`` (a pointed sentence, its ``source`` and
  ``text``, as soon as its number is complete);
- N5 (``research.run(sink=…)``, notebook 05): ``status`` (a stage and what it
  does), ``delta`` (a checked sentence of the report, shown), ``withheld`` (a
  sentence that failed a check, and why: never shown), ``restart`` (the next
  model starts the report over) and ``withdrawn`` (no model is left: what was
  shown is not the answer), ``checked`` (the quotes behind the citations, the
  sentences withheld), ``follow_ups``, ``done``.

A sink is a list for a test or a notebook that inspects the events
(``ListSink``), or ``printing_sink``, which shows them as one growing output.

Cost: nothing. Taught in notebook 05 (the research loop's sinks); the CLI's
``ask`` prints N3's.
"""

from __future__ import annotations

from ..core.display import LiveText
from ..core.errors import BadArgument

#: kind → the fields an event of that kind carries (every one, and no other).
KINDS = {
    "reading": ("tokens", "sentences"), "writing": (), "sentence": ("source", "text"),
    "status": ("stage", "detail"), "delta": ("text",), "withheld": ("text", "reason"), "restart": ("reason",),
    "withdrawn": ("reason",), "checked": ("quotes", "withheld"), "follow_ups": ("questions",), "done": ("seconds",),
}


def check_event(item) -> dict:
    """``item`` if it is an event of the one vocabulary (a dict, a known ``type``, exactly its fields)."""
    if not isinstance(item, dict) or item.get("type") not in KINDS:
        kind = item.get("type") if isinstance(item, dict) else type(item).__name__
        raise BadArgument(f"an event is a dict whose type is one of {', '.join(KINDS)}, not {kind!r}")
    fields = set(item) - {"type"}
    if fields != set(KINDS[item["type"]]):
        raise BadArgument(f"a {item['type']!r} event carries {sorted(KINDS[item['type']])}, not {sorted(fields)}")
    return item


def event(kind: str, **fields) -> dict:
    """One event, checked: ``event("delta", text="…")`` is ``{"type": "delta", "text": "…"}``."""
    return check_event({"type": kind, **fields})


def adapter(on_event):
    """A sink that tells ``on_event(kind, payload)``, N3's older protocol: the event without its type."""
    return lambda item: on_event(item["type"], {k: v for k, v in item.items() if k != "type"})


class ListSink(list):
    """Collects every event; what tests (and curious readers) use."""

    def __call__(self, item: dict) -> None:
        self.append(item)

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


def printing_sink(item: dict) -> None:
    """A live display for a notebook: status lines, then the answer as it streams.

    In a notebook it is ONE output that grows (``rungs.core.display.LiveText``): printed token by token, the
    saved notebook would hold one output per token, a column of fragments in any static view.
    """
    live = LiveText.per_cell()
    kind = item["type"]
    if kind == "status":
        live.write(f"· {item['stage']}: {item['detail']}\n")
    elif kind == "delta":
        live.write(item["text"])
    elif kind == "restart":
        live.write(f"\n[the answer restarts with the next model: {item['reason']}]\n\n")
    elif kind == "withdrawn":
        live.write(f"\n[withdrawn ({item['reason']}): nothing above is the answer]\n")
    elif kind == "checked":
        for q in item["quotes"]:
            live.write(f"\n  [{q['n']}] {q['source']}: « {q['text']} »")
        for w in item["withheld"]:
            said = w["text"] if len(w["text"]) <= 70 else w["text"][:69] + "…"
            live.write(f"\n  withheld: « {said} » — {w['reason']}")
        live.write("\n" if item["quotes"] or item["withheld"] else "")
    elif kind == "follow_ups":
        live.write("\n\nfollow-ups:\n" + "\n".join(f"  - {q}" for q in item["questions"]) + "\n")
    elif kind == "done":
        live.write(f"\n· done in {item['seconds']:.1f} s\n")
        live.close()
