"""The speed table in benchmarks/README.md is the one bench_speed.py prints from its committed results.

No model: the results file is read, its summaries recomputed from the calls they sum up, and the
README's block compared with ``--tables``; the logprobs check it records holds to ~1e-5.
"""

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_speed", REPO / "benchmarks" / "bench_speed.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
BEGIN, END = "<!-- BEGIN speed: written by benchmarks/bench_speed.py --tables from results/speed.json -->", \
    "<!-- END speed -->"


def block(text: str) -> str:
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def test_the_readme_shows_the_tables_of_the_committed_results():
    readme = (REPO / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert block(readme) == bench.tables(bench.load()).strip()


def test_each_summary_is_what_its_calls_give():
    for run in bench.load()["runs"]:
        if run.get("calls"):
            assert run["summary"] == json.loads(json.dumps(bench.summary(run))), run["name"]


def test_the_patched_logits_gave_the_logprobs_every_logit_gives():
    checks = [r for r in bench.load()["runs"] if r.get("kind") == "logprobs"]
    assert checks and all(r["worst"] < 1e-5 and all(x["same_tokens_in_order"] for x in r["rows"]) for r in checks)
    assert len(checks[-1]["rows"]) == 10
