"""One home per concept: the rules the answer half shares are written once, and this test finds a second copy.

Two places that do one thing will disagree — they did: three sentence splitters (one knew « art. 5 »),
two readers of French figures with two unit spellings, the citation syntax three times in N5, the
no-answer sentence twice. Each rule below has one home; the source of every other module of the
package is searched for the mark of a second copy (read from the files, never imported).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import rungs

PACKAGE = Path(rungs.__file__).resolve().parent

#: concept → (its one home, a pattern that only a copy of the rule would write).
HOMES = {
    "sentence splitting": ("core/sentences.py", re.compile(r"\(\?<=\[\.!\?…\]\)")),
    "citation syntax": ("grounding/citations.py", re.compile(r"\\\[\(\[\\d")),
    "the no-answer sentence": ("grounding/abstain.py", re.compile(r"^NO_ANSWER\s*=", re.MULTILINE)),
    "the unit vocabulary": ("grounding/figures.py", re.compile(r"[\"']euros[\"']\s*:")),
    "French number words": ("grounding/figures.py", re.compile(r"[\"']quarante[\"']\s*:")),
    "the yes/no reader": ("grounding/logprobs.py", re.compile(r"^def distribution\(", re.MULTILINE)),
    "JSON reply parsing": ("grounding/replies.py", re.compile(r"json\.loads\(")),
    "the hybrid recipe": ("hybrid.py", re.compile(r"Hybrid\(\{\s*[\"']keyword[\"']|Hybrid\(legs")),
    "the event vocabulary": ("grounding/events.py", re.compile(
        r"\{\s*[\"']type[\"']\s*:\s*(?:kind\b|[\"'](?:reading|writing|sentence|status|delta|withheld|restart|withdrawn"
        r"|checked|follow_ups|done)[\"'])|on_event\(\s*[\"']")),
    "deciding at a threshold": ("grounding/cut.py",
                                re.compile(r"(?<!`)\b(?:p|p_i|self\.p)\s*(?:<|<=|>|>=)\s*(?:t|cut|threshold)\b(?!`)")),
}
#: Modules that read JSON which is not a model's reply (files, settings, records): not a second reply parser.
NOT_REPLIES = {"lab/stored.py", "rag/decision.py", "yours/store.py", "yours/report.py", "lab/handbook.py", "lab/cacm.py", "lab/questions.py",
               "model/processes.py", "model/responses.py", "model/client.py", "model/room.py", "model/server.py",
               "model/supervisor.py", "model/replay.py", "model/bundle.py", "tools/cli.py", "tools/workshop.py",
               "tools/book.py", "tools/doctor.py", "tools/export.py", "model/encoder_snapshot.py", "core/paths.py",
               "model/__main__.py", "lab/sending.py", "vectors.py", "yours/index.py", "yours/update.py",
               "yours/keywords.py", "exercises/n03.py"}  # stored counts; a benchmark's log read line by line


def copies(concept: str, sources: dict[str, str]) -> list[str]:
    home, mark = HOMES[concept]
    allowed = {home} | (NOT_REPLIES if concept == "JSON reply parsing" else set())
    return sorted(path for path, text in sources.items() if path not in allowed and mark.search(text))


def package_sources() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}


@pytest.mark.parametrize("concept", sorted(HOMES))
def test_each_rule_has_one_home(concept):
    sources = package_sources()
    assert HOMES[concept][0] in sources, f"{concept}: its home {HOMES[concept][0]} is gone"
    assert HOMES[concept][1].search(sources[HOMES[concept][0]]), f"{concept}: its home no longer holds it"
    assert copies(concept, sources) == [], f"{concept} is written again outside {HOMES[concept][0]}"


@pytest.mark.parametrize("concept, planted", [
    ("sentence splitting", '_END = re.compile(r"(?<=[.!?…])\\s+")'),
    ("citation syntax", '_CITATION = re.compile(r"\\[([\\d,; ]+)\\]")'),
    ("the no-answer sentence", 'NO_ANSWER = "je ne sais pas"'),
    ("the unit vocabulary", 'UNITS = {"euros": "euros"}'),
    ("deciding at a threshold", 'shown = p >= threshold'),
    ("the event vocabulary", 'sink({"type": "delta", "text": t})'),
    ("the event vocabulary", 'self.on_event("writing", {})'),
])
def test_a_planted_second_copy_is_found(concept, planted):
    sources = package_sources()
    assert "rag/planted.py" not in copies(concept, sources)
    assert "rag/planted.py" in copies(concept, {**sources, "rag/planted.py": planted})


def test_the_mark_and_the_checks_read_every_gold_number_alike():
    """Behaviour, not text: the answer mark (``answer_words``) and the figure check (``figures``) give the same
    numbers for every span of ``benchmarks/data/numbers_gold.jsonl`` (a second reader written differently
    would pass the patterns above and fail here)."""
    import json

    from rungs.grounding import figures
    from rungs.lab.answers import answer_words

    gold = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "numbers_gold.jsonl"
    number = re.compile(r"\d+(?:\.\d+)?")

    def checks(span):
        out = []
        for f in figures.figures(span):
            if number.fullmatch(f.value):
                out.append(float(f.value))
            elif f.kind in ("time", "date"):  # « 8:30 » is 8 and 30; « 1/03 » is the day 1 said
                out += [float(v) for v in re.split("[:/]", f.value)[:2 if f.kind == "time" else 1]]
        return out

    rows = [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines()]
    differ = [(r["span"], m, c) for r in rows
              for m, c in [([float(w) for w in answer_words(r["span"]) if number.fullmatch(w)], checks(r["span"]))]
              if m != c]
    assert len(rows) > 200 and not differ, differ[:5]


#: P against a threshold of 0.5: below, a hair below, equal, a hair above, above (the equal case is the one a
#: second copy of the rule gets wrong: « p > t » or « p <= t »).
AT_HALF = (0.3, 0.5 - 1e-12, 0.5, 0.5 + 1e-12, 0.7)


def _readings(p: float, t: float) -> dict:
    """Each consumer of « P below a threshold says no », asked the same (p, t): True where it says yes."""
    import importlib.util
    import math

    import numpy as np

    from rungs.grounding.trail import Gate
    from rungs.lab import judges
    from rungs.model import ScriptedClient
    from rungs.rag import decision

    spec = importlib.util.spec_from_file_location("bench_abstain", PACKAGE.parent / "benchmarks" / "bench_abstain.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    shipped = decision.Shipped(json.loads(decision.SHIPPED.read_text(encoding="utf-8")))
    shipped.threshold = lambda coverage=None: t  # the rule under test, not the fit: P and threshold given
    shipped.fit.probability = lambda rows: np.array([p])
    top = {"Oui": math.log(p), "Non": math.log(1 - p)}
    said = judges.support("Q ?", "R.", [{"id": "a", "text": "R."}], ScriptedClient([
        {"text": "Oui", "logprobs": [{"token": "Oui", "logprob": top["Oui"], "top": top}]}]), threshold=t)
    mark = {"p": p, "answerable": True, "abstained": False}
    return {"the gate": not Gate(p, t).closed,
            "the shipped decision": shipped.judge({s: 0.5 for s in shipped.fit.names})["answer"],
            "the support judge": said["supported"] if said["p"] == p else "P read as another number",
            "the support table": judges.threshold_table([{"correct": True, "p": p}], [t])[0]["flagged"] == 0,
            "the gate replayed (bench_abstain)": not bench.gated(mark, t).get("abstained")}


@pytest.mark.parametrize("p", AT_HALF)
def test_every_consumer_of_the_threshold_rule_reads_alike(p):
    """Behaviour, not text: the gate, the shipped decision, the support judge, its threshold table and the
    benchmark's replay of the gate give the one home's reading (``rungs.grounding.cut.passes``) on each P."""
    from rungs.grounding.cut import passes

    readings = _readings(p, 0.5)
    assert readings == {name: passes(p, 0.5) for name in readings}, readings



def test_the_question_is_read_once_at_the_door_of_ask():
    """The walk of one question through ``python -m rungs ask`` (``benchmarks/walk_ask.py``): its text is read
    by one check, the door's (``Answerer.ask``); every room after it is handed the door's ``Checked`` text and
    passes it on without reading it again (before: 21 checks read it, the same text each time)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("walk_ask", PACKAGE.parent / "benchmarks" / "walk_ask.py")
    walk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(walk)
    done = walk.walk()
    assert done["check_calls"] == {"core/errors.check_query": 1}, done["check_calls"]
    assert done["passed_on"] > 0 and done["rooms"] > 1  # the question still goes everywhere it went


def test_a_checked_text_is_still_held_to_a_shorter_limit():
    from rungs.core.errors import BadArgument, Checked, check_query, check_text

    text = Checked("x" * 50)
    assert check_query(text, max_chars=50) is text and check_text(text, "t") is text
    with pytest.raises(BadArgument, match="has 50 characters; the limit is 10"):
        check_query(text, max_chars=10)


def _streamed_events(sink=None, on_event=None):
    """N3 in pointing mode, streamed to ``sink`` (or to ``on_event``, its older form)."""
    from rungs import rag
    from rungs.model import ScriptedClient

    client = ScriptedClient([{"chunks": ['{"phrases": [', "2", ", 1", "]}"]}])
    return rag.answer("Phrase ?", [{"id": "a", "text": "Phrase un. Phrase deux."}], client, mode="pointing", sink=sink,
               on_event=on_event)


def _research_events(sink):
    """N5, one scripted report: a shown sentence and one withheld (it cites a source never gathered)."""
    from rungs import bm25, research
    from rungs.lab.handbook import load_pages
    from rungs.model import ScriptedClient

    pages = load_pages()
    return research.run("Combien de jours de congés payés ?", pages=pages, retriever=bm25.build_index(pages, stopwords=True),
                 client=ScriptedClient(["Vous acquérez 2,5 jours par mois [1]. Rien de plus [9]."]),
                 follow_ups=False, sink=sink)


def test_n3_and_n5_tell_their_sinks_one_event_type():
    """Behaviour: N3's stream and N5's run tell a sink events of the one vocabulary (``rungs.grounding.events``),
    each passing the one validator; N3's older ``on_event`` hears the same events, without their type."""
    from rungs.grounding import events

    n3, n5, old = events.ListSink(), events.ListSink(), []
    _streamed_events(sink=n3)
    _research_events(n5)
    _streamed_events(on_event=lambda kind, payload: old.append((kind, payload)))
    assert [e["type"] for e in n3] == ["reading", "writing", "sentence", "sentence"], n3
    assert {"status", "delta", "withheld", "checked", "done"} <= {e["type"] for e in n5}, n5
    assert all(events.check_event(e) is e for e in n3 + n5)
    assert old == [(e["type"], {k: v for k, v in e.items() if k != "type"}) for e in n3]


@pytest.mark.parametrize("rung, kind", [("N3", "sentence"), ("N3", "reading"), ("N5", "delta"), ("N5", "status")])
def test_each_rung_goes_through_the_one_vocabulary(monkeypatch, rung, kind):
    """A kind struck from ``KINDS`` is refused to whichever rung emits it: both rungs make their events with
    ``events.event``, none writes its own dict. (N5's report stream takes a refusal there for a failed model:
    its note says so.)"""
    from rungs.core.errors import RungsError
    from rungs.grounding import events

    monkeypatch.delitem(events.KINDS, kind)
    try:
        out = _streamed_events(sink=events.ListSink()) if rung == "N3" else _research_events(events.ListSink())
    except RungsError as err:
        said = str(err)
    else:
        said = " ".join(out.notes)
    assert f"not {kind!r}" in said, said
