"""Every benchmark's run path runs here: a scripted model, a two-question slice, a scratch folder, seconds.

What it is for: a benchmark is run by hand, months apart, with the real model; the README's tables come
from its results. An API it calls that is renamed or removed used to break it silently (issue 40:
``rag.answer_with_details`` was gone, and three benchmarks with it). Here each benchmark that asks a model
(or ``rag``, N4's decisions, N5's research) runs the way its command line runs it, on a test double that
answers in the shape it is asked (``Deciding``: ``answer_doubles.Behaving`` and N4's typed questions), on two
questions, writing into ``tmp_path``; the lines it writes are held to the shape of the lines committed in
``benchmarks/results/``, which are read and never written.

Every ``benchmarks/bench_*.py`` is found by discovery and must be in exactly one list: ``EXERCISED`` (run
here), ``COVERED`` (asks no model; its own test reads its committed results), ``NO_MODEL`` (asks no model;
checked to name none) or ``NOT_REACHABLE`` (with the reason). A new benchmark in none of them fails, as a new
retriever outside ``NOT_RETRIEVERS`` does (``tests/test_contract.py``).

Cost: a few seconds; no model, no server, no network; a bag-of-letters encoder stands for USE.
"""

from __future__ import annotations

import importlib
import io
import json
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from answer_doubles import Behaving
from doubles import Letters
from rungs import decide, hybrid, rag
from rungs import model as llm
from rungs.model import ChatResult
from rungs.rag import answering
from rungs.research import loop

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"
RESULTS = BENCH / "results"
sys.path.insert(0, str(BENCH))  # bench_answers and bench_abstain import bench_modes from beside them

#: Run here, each by the test named.
EXERCISED = {
    "bench_answers": "test_bench_answers_runs_every_configuration_and_sums_up",
    "bench_modes": "test_bench_modes_runs_every_mode_and_writes_the_committed_shape",
    "bench_speed": "test_bench_speed_freezes_the_prompts_rag_sends_and_compares_servers",
    "bench_abstain": "test_bench_abstain_runs_every_system_on_the_handbook",
    "bench_agents": "test_bench_agents_reads_what_decisions_and_research_cost",
    "bench_room": "test_bench_room_plays_learners_and_counts_what_rag_refused",
    "bench_long_documents": "test_bench_long_documents_has_the_model_write_questions",
    "bench_research_fusion": "test_bench_research_fusion_gathers_through_the_loop_itself",
}
#: Ask no model; their own test reads their committed results and runs what they compute.
COVERED = {
    "bench_decision": "tests/test_bench_decision.py",
    "bench_loss": "tests/test_bench_loss.py",
    "bench_lead": "tests/test_bench_lead.py",
    "bench_folder": "tests/test_bench_folder.py",
    "bench_peers": "tests/test_bench_peers.py",
    "bench_encoding": "tests/test_encoding_pool.py",
}
#: Ask no model and have no test of their own: checked below to name no model, ``rag``, decision or research.
NO_MODEL = {
    "bench_charset": "reads the charset samples with each decoder; no model",
    "bench_commands": "times the command line's commands that ask no model (search, index); no model",
    "bench_default_fusion": "retrieval only: the fusion's default measured on the judged questions",
    "bench_folder_default": "retrieval only: the folder default's candidates over two folders, two kinds; no model",
    "bench_numbers": "the figure reader against its gold file; no model",
    "bench_pdf_furniture": "PDF running headers and footers; no model",
    "bench_pdf_readers": "PDF readers compared on the sample PDFs; no model",
    "bench_query_scale": "retrieval timings as the collection grows; no model",
    "bench_rerank": "N1's knobs re-ranking BM25 (not N4's reranker); no model",
    "bench_sentences": "sentence splitters against the gold boundaries; no model",
    "bench_tuning_null": "the tuning protocol on null data; no model",
}
#: Ask a model, and cannot be run without one: why.
NOT_REACHABLE = {
    "bench_models": "times the real encoders' loading and the local server's first token through the OpenAI SDK's "
                    "stream: what it measures is the model itself, and nothing in it goes through rungs' clients",
    "bench_portable": "loads the model file in llama_cpp directly, in one subprocess per build of llama-cpp-python; "
                      "its only rungs call is rag.build_prompt, which tests/test_rag.py holds",
    "bench_logprobs": "loads the model in llama_cpp in-process and times its logprobs path against rungs.model."
                      "patches: a double would time nothing (tests/test_llama_patches.py holds the numbers)",
}
#: What asks a model — N3's answer, a decision, research, a judge, a reranker, a client: a benchmark in
#: ``NO_MODEL`` says none of it (``rag``'s model-free parts, its sentences and its shipped decision, are not asks).
ASKS = re.compile(r"\b(?:rag\.(?:answer|Rag)\b|(?:decide|research|judges|rerank|llm)\.\w+)|\bclient\b|default_client"
                  r"|\.chat\(")


def bench(name: str):
    return importlib.import_module(name)


def committed(path: Path, key: str) -> dict:
    """The committed lines of a results log: their key sets, by configuration (what a new line must match)."""
    shapes: dict = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        shapes.setdefault(row[key], set()).add(frozenset(row))
    return shapes


class Deciding(Behaving):
    """``Behaving("faithful")``, and every yes/no or typed question answered in its shape: the first option
    certain by chat (each probability 0 or 1); by logprobs, « Oui », « A » or « 3 » first, in one distribution
    (``Behaving``'s own yes/no adds up to 1.001, which N4 refuses to read)."""

    TOPS = {"par Oui ou par Non.": {"Oui": -0.1, "Non": -2.5}, "la lettre de l'option.": {"A": -0.1, "B": -2.5},
            "un chiffre": {"3": -0.1, "0": -2.5}}

    def __init__(self):
        super().__init__("faithful")

    def chat(self, messages, *, temperature=0.0, max_tokens=512, json_schema=None, logprobs=0, seed=0):
        asked = messages[-1]["content"].rsplit("\n", 1)[-1]
        top = next((t for end, t in self.TOPS.items() if end in asked), {"Oui": -0.1, "Non": -2.5})
        props = (json_schema or {}).get("properties", {})
        typed = props and all(v.get("type") == "number" or "probs" in v.get("properties", {}) for v in props.values())
        if not logprobs and not typed:
            return super().chat(messages, max_tokens=max_tokens, json_schema=json_schema, logprobs=logprobs)
        self.calls.append({"messages": messages, "json_schema": json_schema, "logprobs": logprobs})
        if logprobs:
            first = next(iter(top))
            return ChatResult(text=first, model=self.model, input_tokens=50, output_tokens=1, finish_reason="length",
                              latency=0.0, logprobs=[{"token": first, "logprob": -0.1, "top": top}])
        answer = {}
        for qid, v in props.items():
            if v.get("type") == "number":
                answer[qid] = 0.9
                continue
            keys = v["properties"]["probs"]["required"]
            head = {"choice": keys[0]} if "choice" in v["properties"] else {"score": 0}
            answer[qid] = {**head, "probs": {k: float(k == keys[0]) for k in keys}}
        return ChatResult(text=json.dumps(answer), model=self.model, input_tokens=60, output_tokens=30,
                          finish_reason="stop", latency=0.0)


@pytest.fixture
def double(monkeypatch):
    """The model every run asks, ``Deciding()``, wherever a default client would be made; a bag of letters
    for USE in the answer retriever."""
    model = Deciding()
    for module in (llm, answering, decide, loop):
        monkeypatch.setattr(module, "default_client", lambda *a, **k: model)
    real = hybrid.answer_retriever
    monkeypatch.setattr(hybrid, "answer_retriever", lambda docs, encoder=None: real(docs, encoder or Letters()))
    return model


def quiet(fn, *args, **kwargs):
    with redirect_stdout(io.StringIO()) as out:
        result = fn(*args, **kwargs)
    return result, out.getvalue()


# ---------------------------------------------------------------- discovery

def test_every_benchmark_is_exercised_covered_or_named_with_why_not():
    found = {p.stem for p in BENCH.glob("bench_*.py")}
    lists = [EXERCISED, COVERED, NO_MODEL, NOT_REACHABLE]
    named = [n for names in lists for n in names]
    assert len(named) == len(set(named)), "a benchmark is in two lists"
    assert found - set(named) == set(), "a benchmark neither run here nor named with why not"
    assert set(named) - found == set(), "a list names a benchmark that is not there"
    assert all(len(why) > 30 for why in NOT_REACHABLE.values())  # a reason, not a placeholder
    tests = {n for n, v in globals().items() if n.startswith("test_") and callable(v)}
    assert set(EXERCISED.values()) <= tests
    assert all((REPO / t).exists() for t in COVERED.values())


def test_no_benchmark_listed_as_asking_no_model_asks_one():
    for name in [*NO_MODEL, *COVERED]:
        said = ASKS.findall((BENCH / f"{name}.py").read_text(encoding="utf-8"))
        assert not said, f"{name} is listed as asking no model, and says {sorted(set(said))}"


def test_discovery_would_see_a_new_benchmark(tmp_path, monkeypatch):
    # A negative control: a new bench_*.py beside the others is in no list.
    (tmp_path / "bench_new.py").write_text("from rungs import rag\nrag.answer('q', [])\n", encoding="utf-8")
    for p in BENCH.glob("bench_*.py"):
        (tmp_path / p.name).write_text("", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "BENCH", tmp_path)
    with pytest.raises(AssertionError, match="neither run here"):
        test_every_benchmark_is_exercised_covered_or_named_with_why_not()


# ---------------------------------------------------------------- N3: the answer benchmarks

def _to_tmp(monkeypatch, tmp_path, *targets):
    for module, name in targets:
        monkeypatch.setattr(module, name, tmp_path / f"{module.__name__}.{name}")


def test_bench_answers_runs_every_configuration_and_sums_up(double, tmp_path, monkeypatch):
    b, modes = bench("bench_answers"), bench("bench_modes")
    _to_tmp(monkeypatch, tmp_path, (b, "LOG"), (b, "SUMMARY"), (b, "READING"), (modes, "LOG"), (modes, "SUMMARY"))
    monkeypatch.setattr(modes, "OLD_LOG", b.LOG)  # « free » is read from the configurations' log, as committed
    assert quiet(b.main, ["--limit", "2"])[0] == 0
    rows = {}
    for line in b.LOG.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        rows[r["config"], r["id"]] = r  # support and judge append the notebook's line again, completed
    shapes = committed(RESULTS / "answers.jsonl", "config")
    assert {c for c, _ in rows} == set(b.CONFIGS) and len(rows) == 2 * len(b.CONFIGS)
    for (config, qid), r in rows.items():
        assert frozenset(r) in shapes[config], (config, qid, sorted(r))
        assert r["error"] is None and r["calls"] == 1 and r["sources"] and r["answer"], r
    assert all(rag.HANDBOOK in c["messages"][0]["content"] for c in double.calls if not c["logprobs"])
    notebook = [r for (c, _), r in rows.items() if c == "notebook 03"]
    assert all(r["support"]["supported"] is not None and r["judge"]["same"] is not None for r in notebook)
    summary = json.loads(b.SUMMARY.read_text(encoding="utf-8"))
    assert set(summary["rows"]) == set(b.CONFIGS) and summary["support"]["checked"] == 2
    # --summary asks no model: the stored lines marked again, the modes' summary written beside.
    monkeypatch.setattr(llm, "default_client", lambda *a, **k: Behaving("down"))
    assert quiet(b.main, ["--limit", "2", "--summary"])[0] == 0
    assert "free" in json.loads(modes.SUMMARY.read_text(encoding="utf-8"))["systems"]


def test_bench_modes_runs_every_mode_and_writes_the_committed_shape(double, tmp_path, monkeypatch):
    from rungs.lab.handbook import load_pages, load_questions

    modes = bench("bench_modes")
    _to_tmp(monkeypatch, tmp_path, (modes, "LOG"), (modes, "SUMMARY"), (modes, "OLD_LOG"))
    questions, pages = load_questions(), load_pages()
    quiet(modes.run, list(modes.MODES), questions, pages, double, limit=2)
    rows = [json.loads(line) for line in modes.LOG.read_text(encoding="utf-8").splitlines()]
    [shape] = {s for shapes in committed(RESULTS / "answers_modes.jsonl", "config").values() for s in shapes}
    assert [r["config"] for r in rows] == [m for m in modes.MODES for _ in range(2)]
    for r in rows:
        assert frozenset(r) == shape, sorted(r)
        assert r["error"] is None and r["answer"] and r["sources"] and r["replies"], r
        assert r["calls"] >= 1 and r["input_tokens"] > 0 and isinstance(r["seconds"], float), r
        assert r["half"] == "decide" and all(set(q) == {"source", "text"} for q in r["quotes"]), r
    assert all(r["quotes"] for r in rows if r["config"] != "free" and r["config"] != "free-now")
    out, _ = quiet(modes.summarise, questions, pages)
    assert set(out["systems"]) == set(modes.MODES) and out["systems"]["pointing"]["decide"]["n"] == 2


def test_bench_modes_stores_a_refusal_as_the_committed_lines_do(tmp_path, monkeypatch):
    from rungs.lab.handbook import load_pages, load_questions

    modes = bench("bench_modes")
    _to_tmp(monkeypatch, tmp_path, (modes, "LOG"))
    real = hybrid.answer_retriever
    monkeypatch.setattr(hybrid, "answer_retriever", lambda docs, encoder=None: real(docs, Letters()))
    quiet(modes.run, ["quoted"], load_questions(), load_pages(), Behaving("garbage"), limit=1)
    [r] = [json.loads(line) for line in modes.LOG.read_text(encoding="utf-8").splitlines()]
    assert r["answer"] is None and r["sources"] == [] and r["error"].startswith("AnswerUnavailable: ")
    assert r["calls"] == 2 and len(r["replies"]) == 2 and len(r["refused"]) == 2


def test_bench_speed_freezes_the_prompts_rag_sends_and_compares_servers(double, monkeypatch):
    b = bench("bench_speed")
    frozen = b.load()["prompts"]
    prompts = b.build_prompts()
    assert [p["id"] for p in prompts["n3"]] == b.N3_QUESTIONS
    assert [set(p) for p in prompts["n3"]] == [set(p) for p in frozen["n3"]]
    assert prompts["decisions"] == frozen["decisions"]
    # Frozen on purpose: the wording has moved on since (« aucune », the shared start), the extracts have not.
    assert all(rag.HANDBOOK in p["messages"][0]["content"] for p in prompts["n3"])
    for now, then in zip(prompts["n3"], frozen["n3"]):
        assert re.findall(r"<extrait id=[^>]*>", now["messages"][0]["content"]) == \
            re.findall(r"<extrait id=[^>]*>", then["messages"][0]["content"])

    class Server:  # a server of the comparison, answering at once
        def __init__(self, name):
            self.name = name

        def ask(self, messages, *, json_schema=None, max_tokens=300, logprobs=0):
            return {"seconds": 1.0, "cpu_seconds": 1.0, "prompt_tokens": 700, "reused_tokens": 0,
                    "output_tokens": 9, "text_sha": "0" * 12, "logprobs": None}

        def stop(self):
            pass

    monkeypatch.setattr(b, "servers", lambda names: [Server(n) for n in names])
    run, _ = quiet(b.compare, {"prompts": prompts}, "test", ["today", "rungs-1t"], 2, False, 1)
    shape = {frozenset(c) for r in b.load()["runs"] for c in r.get("calls", ()) if "round" in c}
    assert len(run["calls"]) == 4 and all(frozenset(c) in shape for c in run["calls"])
    assert b.summary(run)["rows"]["rungs-1t"]["same_text"] == "2/2" and b.table(run)
    reused, _ = quiet(b.reuse, {"prompts": prompts}, "rungs-default", 2)
    assert [c["config"] for c in reused["calls"]] == ["after other passages", "after the same passages"] * 2


def test_bench_abstain_runs_every_system_on_the_handbook(double, tmp_path, monkeypatch):
    b = bench("bench_abstain")
    _to_tmp(monkeypatch, tmp_path, (b, "LOG"))
    quiet(b.run, list(b.SYSTEMS), limit=2)
    rows = [json.loads(line) for line in b.LOG.read_text(encoding="utf-8").splitlines()]
    [shape] = {s for shapes in committed(RESULTS / "abstain.jsonl", "system").values() for s in shapes}
    assert [r["system"] for r in rows] == [s for s in b.SYSTEMS for _ in range(2)]
    for r in rows:
        assert frozenset(r) == shape, (r["system"], sorted(r))
        assert r["status"] in ("answered", "no answer"), r
    assert all(r["gate"]["p"] is not None for r in rows if r["system"] != "closed-book")


# ---------------------------------------------------------------- N4, N5 and the room

def test_bench_agents_reads_what_decisions_and_research_cost(double, monkeypatch):
    b = bench("bench_agents")
    monkeypatch.setattr(b.server, "local_server", lambda *a, **k: None)  # no server: the double answers
    _, said = quiet(b.main)
    for line in ("  chat      calls 1", "  logprobs  calls 3", "rerank 10 pages", "  quick ", "  research "):
        assert line in said, said
    assert "5 answered" in said.split("  research ")[1], said


def test_bench_room_plays_learners_and_counts_what_rag_refused(monkeypatch):
    b = bench("bench_room")
    work = b.questions_with_passages(2)
    assert len(work) == 2 and all(len(passages) == 4 for _, passages in work)
    for behaviour, refused in (("faithful", []), ("garbage", ["AnswerUnavailable"] * 2)):
        monkeypatch.setattr(b.llm, "Client", lambda **kw: Behaving(behaviour))
        row = b.play("http://127.0.0.1:1/v1", 2, 1, work)
        assert row["answers"] == 2 and row["refused"] == refused, row
        assert set(row) == set(json.loads((RESULTS / "room.json").read_text(encoding="utf-8"))["rows"][0])


def test_bench_long_documents_has_the_model_write_questions(double, tmp_path):
    b = bench("bench_long_documents")

    class Index:  # the two documents' passages, as the folder index lists them
        def passages(self):
            return [{"doc": f"d{i}", "id": f"d{i}#1", "body": "Une phrase de documentation. " * 12} for i in (1, 2)]

    quiet(b.model_questions, Index(), tmp_path, minutes=1.0, n_docs=2)
    written, _ = quiet(b.model_questions, Index(), tmp_path, minutes=1.0, n_docs=2)  # a rerun reads its cache
    assert [q["id"] for q in written] == ["m0001", "m0002"] and len(double.calls) == 2
    assert all(q["question"] and q["relevant"] == q["judged"] for q in written)


def test_bench_research_fusion_gathers_through_the_loop_itself(double):
    from rungs import research
    from rungs.lab.handbook import load_pages

    b = bench("bench_research_fusion")
    pages = load_pages()
    retriever = b.Cached(research.default_retriever(pages))
    gathered = b.gather([["congés payés acquis par mois"], ["remboursement d'un taxi"]], pages, retriever, 60, 3)
    assert 0 < len(gathered) <= b.BOUNDS["max_sources"] and all(isinstance(p, str) for p in gathered)
    example = b.notebook_example(pages, retriever)
    stored = json.loads((RESULTS / "research_fusion.json").read_text(encoding="utf-8"))["notebook_05_section_4"]
    assert set(example) == set(stored) and all(len(v) == 3 for v in example.values())
