"""The trace read as typed fields: ``answer.gate``, ``answer.decision``, ``answer.hits``, ``answer.replies``…

Issue 40: ``Answer.trace`` was the real interface — the command line, the contract and the benchmarks read
its keys, and the command line decided the gate again by itself. Now they read the fields of
``rungs.grounding.trail``; this test holds that no consumer in ``rungs/`` or ``benchmarks/`` reads a trace key
(the rungs that write the trace are named, each with why), and that the fields say what the rung wrote.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rungs.core.errors import BadArgument
from rungs.grounding import Answer, Decided, Gate, Status

from answer_doubles import Behaving

ROOT = Path(__file__).resolve().parent.parent
#: A read of a trace key: ``x.trace[...]``, ``x.trace.get(...)``, ``d["trace"]`` (a stored answer's).
READS = re.compile(r"\.trace\s*(\[|\.get\s*\()|\[\s*[\"']trace[\"']\s*\]")
#: The files that write the trace (a rung keeps its record there as it goes), each with why; every other
#: module reads the typed fields.
WRITERS = {
    "rungs/grounding/trail.py": "the one reader of the trace's keys: it types them",
    "rungs/grounding/answer.py": "the Answer itself: to_dict writes the trace as JSON",
    "rungs/rag/answering.py": "N3 writes its prompt, replies, gate and decision as it answers",
    "rungs/rag/answerers.py": "Rag adds the hits it read to the reader's record",
    "rungs/research/loop.py": "N5 writes its plan, rounds and calls as the loop goes",
    "rungs/research/settle.py": "N5 writes what it withheld, its error and its seconds as it settles",
}


def trace_readers(sources: dict[str, str]) -> list[str]:
    """The files (other than the writers) that read a key of a trace, with the line that does."""
    return [f"{path}:{n}: {line.strip()}" for path, text in sorted(sources.items()) if path not in WRITERS
            for n, line in enumerate(text.splitlines(), 1) if READS.search(line)]


def _sources() -> dict[str, str]:
    files = list((ROOT / "rungs").rglob("*.py")) + list((ROOT / "benchmarks").rglob("*.py"))
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in files}


def test_no_consumer_reads_trace_keys():
    sources = _sources()
    assert set(WRITERS) <= set(sources), f"a writer named here is gone: {sorted(set(WRITERS) - set(sources))}"
    found = trace_readers(sources)
    assert not found, "read the typed fields (answer.gate, .decision, .hits, .replies, .fences, .error, " \
                      "answer.trail…), not the trace's keys:\n" + "\n".join(found)


@pytest.mark.parametrize("line", ['g = answer.trace["gate"]', "hits = out.trace.get('hits', [])",
                                  'gate = d["trace"].get("gate")'])
def test_a_planted_read_of_a_trace_key_is_seen(line):
    assert trace_readers({"benchmarks/bench_new.py": f"def f(answer, out, d):\n    {line}\n"})


def _copy_with_decision(behaviour):
    from rungs import bm25
    from rungs.rag import Rag

    pages = [{"id": "conges", "title": "Congés", "body": "Chaque salarié acquiert 2,5 jours ouvrables par mois."},
             {"id": "badge", "title": "Badge", "body": "Un badge perdu se signale à l'accueil."}]
    return Rag(bm25.build_index(pages, stopwords=True), pages, Behaving(behaviour), mode="copy")


@pytest.mark.parametrize("behaviour", ["faithful", "abstains"])
def test_the_fields_say_what_the_rung_wrote(behaviour):
    out = _copy_with_decision(behaviour).ask("Combien de jours de congés par mois ?")
    raw = out.trace
    assert isinstance(out.decision, Decided) and isinstance(out.gate, Gate)
    assert out.decision.p == raw["decision"]["p"] and out.decision.threshold == raw["decision"]["threshold"]
    assert out.decision.shown is raw["decision"]["answer"] and out.decision.signals == raw["decision"]["signals"]
    assert out.gate.p == raw["gate"]["p"] and out.gate.threshold is None and not out.gate.closed
    assert [h.id for h in out.hits] == [h.id for h in raw["hits"]] and out.fences == tuple(raw["fences"])
    assert out.status is (Status.ANSWERED if out.decision.shown else Status.NO_ANSWER)
    assert out.to_dict()["trace"]["decision"]["p"] == out.decision.p  # the stored record is unchanged


def test_the_gate_rule_is_below_its_threshold_only():
    assert Gate(0.2, 0.5).closed and not Gate(0.5, 0.5).closed and not Gate(None, 0.5).closed
    assert not Gate(0.2, None).closed


@pytest.mark.parametrize("trace, named", [({"gate": "oui"}, "gate must be a dict"),
                                          ({"gate": {"p": 3.0}}, "gate's p"),
                                          ({"decision": {"p": 0.5, "threshold": 0.4, "coverage": 0.5}}, "shown"),
                                          ({"replies": "abc"}, "replies must be a list"),
                                          ({"error": "boom"}, "error must be a RungsError"),
                                          ({"repairs": -1}, "repairs")])
def test_a_trace_of_the_wrong_shape_is_refused_by_name(trace, named):
    answer = Answer(question="q ?", status=Status.NO_ANSWER, text="Je ne sais pas.", trace=trace)
    with pytest.raises(BadArgument, match=named):
        answer.trail
