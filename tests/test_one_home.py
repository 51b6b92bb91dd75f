"""One home per concept: the rules the answer half shares are written once, and this test finds a second copy.

Two places that do one thing will disagree — they did: three sentence splitters (one knew « art. 5 »),
two readers of French figures with two unit spellings, the citation syntax three times in N5, the
no-answer sentence twice. Each rule below has one home; the source of every other module of the
package is searched for the mark of a second copy (read from the files, never imported).
"""

from __future__ import annotations

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
}
#: Modules that read JSON which is not a model's reply (files, settings, records): not a second reply parser.
NOT_REPLIES = {"lab/abstention_summary.py", "lab/folder_default.py", "lab/abstention_decision.py", "rag/decision.py", "yours/store.py", "yours/report.py", "lab/handbook.py", "lab/cacm.py", "lab/questions.py",
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
