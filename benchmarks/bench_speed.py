"""Answers in seconds: the local server run several ways, on the same real N3 prompts, measured side by side.

Run:  flock /tmp/rungs-cpu.lock .venv/bin/python benchmarks/bench_speed.py prompts      # once: freeze the prompts
      flock /tmp/rungs-cpu.lock .venv/bin/python benchmarks/bench_speed.py run --name NAME --configs A,B [--busy]
      flock /tmp/rungs-cpu.lock .venv/bin/python benchmarks/bench_speed.py reuse --config C
      flock /tmp/rungs-cpu.lock .venv/bin/python benchmarks/bench_speed.py logprobs
      .venv/bin/python benchmarks/bench_speed.py --tables        # the markdown of benchmarks/README.md

The prompts are frozen in ``results/speed.json`` the first time (eight N3 prompts as
``rag.answer`` sends them in its default mode, pointing with a lead-in, their
questions and passages those of ``results/answers_modes.jsonl``; ten decision prompts as
``decide.logprob_prompt`` writes them for the reranker's judge), so a later change to the
prompts' wording never changes what a comparison measured. Each configuration (``CONFIGS``) is
one server process, all loaded before the first timed call; every prompt goes to each server in
turn, the order alternating prompt after prompt (A B, B A, …) so that a neighbour's burst on this
shared 2-core machine falls on both alike. Each server sees the same sequence of prompts, so the
prompt-prefix reuse between consecutive prompts is the same for all. Recorded per call: seconds,
prompt tokens, tokens reused from the cache (when the server reports them), output tokens, and a
hash of the text (greedy decoding: a configuration that changes the answer is seen). ``--busy``
runs a second busy process (a pure-Python loop on one core) through the whole comparison: a
learner's laptop is rarely idle.

``stock`` servers are ``python -m llama_cpp.server`` as it ships (today's rungs launch was that,
plus a watchdog); ``rungs`` servers are ``python -m rungs.model llama-server`` (rungs' own launch).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from rungs.model import processes

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "speed.json"
MODES_LOG = REPO / "benchmarks" / "results" / "answers_modes.jsonl"

#: Eight questions of the judged set, spread over its kinds (the first of each pointing-lead line kept).
N3_QUESTIONS = ["q001", "q009", "q024", "q040", "q063", "q088", "q112", "q140"]
#: The reranker's judge asked of five questions × two pages: the first page answers, the second not.
DECISION_PAIRS = [("q001", "conges-payes", "teletravail"), ("q009", "conge-paternite", "notes-de-frais"),
                  ("q024", "jours-feries", "cse"), ("q040", None, None), ("q063", None, None)]

BASE = {"launcher": "stock", "threads": 1, "n_ctx": 4096, "logits_all": True}
#: Every configuration measured; the first of a comparison is its reference.
CONFIGS = {
    "today": dict(BASE),                                               # llama_cpp.server's default: logits_all=True
    "stock-last-logits": {**BASE, "logits_all": False},                 # refuses logprobs: the bound to reach
    "rungs-1t": {**BASE, "launcher": "rungs", "logits_all": False},     # rungs' launch, patched, one thread
    "rungs-2t": {**BASE, "launcher": "rungs", "logits_all": False, "threads": 2},
    "rungs-1t-ctx2048": {**BASE, "launcher": "rungs", "logits_all": False, "n_ctx": 2048},
    "rungs-1t-batch256": {**BASE, "launcher": "rungs", "logits_all": False, "n_batch": 256, "n_ubatch": 256},
    "rungs-1t-flash": {**BASE, "launcher": "rungs", "logits_all": False, "flash_attn": True},
    "rungs-default": {"launcher": "rungs-default"},                     # exactly what rungs launches by default now
}


def load() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {"runs": []}


def save(data: dict) -> None:
    for run in data["runs"]:
        if run.get("calls"):
            run["summary"] = summary(run)  # what the tables show, kept with the calls they come from
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- the prompts, frozen once

def build_prompts() -> dict:
    """The N3 prompts exactly as rag sends them (captured by a scripted client), and the decision prompts."""
    from rungs import decide, rag, rerank
    from rungs.core.documents import passage_text
    from rungs.lab.handbook import load_pages, load_questions
    from rungs.model import ScriptedClient

    pages = {p["id"]: p for p in load_pages()}
    questions = {q["id"]: q for q in load_questions()}
    sent = {}
    for line in MODES_LOG.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["config"] == "pointing-lead":
            sent.setdefault(row["id"], row["sent"])
    n3 = []
    for qid in N3_QUESTIONS:
        capture = ScriptedClient([])  # no reply: the first call is recorded, then the answer is unavailable
        rag.answer(questions[qid]["question"], [pages[i] for i in sent[qid]], capture, collection=rag.HANDBOOK)
        call = capture.calls[0]
        n3.append({"id": qid, "passages": sent[qid], "messages": call["messages"], "json_schema": call["json_schema"],
                   "max_tokens": call["max_tokens"]})
    judge = decide.check_questions({"judge": rerank.RELEVANCE})["judge"]
    decisions = []
    for qid, good, bad in DECISION_PAIRS:
        good, bad = good or sent[qid][0], bad or sent[qid][-1]
        for page in (good, bad):
            state = {"question": questions[qid]["question"], "passage": passage_text(pages[page])[:600]}
            decisions.append({"id": f"{qid}/{page}", "messages": decide.logprob_prompt(state, "judge", judge)})
    return {"n3": n3, "decisions": decisions}


# ---------------------------------------------------------------- the servers

def command(config: dict, model: str, port: int) -> list[str]:
    if config["launcher"] == "rungs-default":
        from rungs.model import launch
        return [sys.executable, "-m", "rungs.model", "llama-server",
                *launch.llama_args(Path(model), host="127.0.0.1", port=port, threads=launch.default_threads(),
                                   n_ctx=launch.N_CTX)]
    head = [sys.executable, "-m", "llama_cpp.server"] if config["launcher"] == "stock" else \
        [sys.executable, "-m", "rungs.model", "llama-server"]
    args = ["--model", model, "--model_alias", "bench", "--host", "127.0.0.1", "--port", str(port),
            "--n_threads", str(config["threads"]), "--n_threads_batch", str(config["threads"]),
            "--n_ctx", str(config["n_ctx"]), "--seed", "0", "--verbose", "False", "--interrupt_requests", "False",
            "--logits_all", str(config["logits_all"])]
    for name in ("n_batch", "n_ubatch"):
        if name in config:
            args += [f"--{name}", str(config[name])]
    if config.get("flash_attn"):
        args += ["--flash_attn", "True"]
    return head + args


class Server:
    def __init__(self, name: str, model: str):
        self.name, self.config, self.port = name, CONFIGS[name], processes.free_port()
        self.proc = subprocess.Popen(command(self.config, model, self.port), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    def wait(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"server {self.name} exited with {self.proc.returncode}")
            if processes.http_ready(self.port):  # the one readiness probe, rungs.model's
                return
            time.sleep(0.5)
        raise SystemExit(f"server {self.name} did not start")

    def ask(self, messages, *, json_schema=None, max_tokens=300, logprobs=0) -> dict:
        body = {"model": "bench", "messages": messages, "temperature": 0, "seed": 0, "max_tokens": max_tokens}
        if json_schema is not None:
            body["response_format"] = {"type": "json_object", "schema": json_schema}
        if logprobs:
            body.update(logprobs=True, top_logprobs=logprobs)
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/v1/chat/completions",
                                         data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        start, cpu = time.perf_counter(), self.cpu()
        with urllib.request.urlopen(request, timeout=1800) as r:
            data = json.loads(r.read())
        seconds, cpu = time.perf_counter() - start, self.cpu() - cpu
        usage = data.get("usage") or {}
        text = data["choices"][0]["message"]["content"] or ""
        return {"seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3), "prompt_tokens": usage.get("prompt_tokens"),
                "reused_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens"),
                "output_tokens": usage.get("completion_tokens"), "text_sha": hashlib.sha256(text.encode()).hexdigest()[:12],
                "logprobs": data["choices"][0].get("logprobs")}

    def cpu(self) -> float:
        """The server's CPU seconds so far (user + system, every thread): its work, whatever else the machine runs."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def busy_neighbour() -> subprocess.Popen:
    """One core kept busy by a pure-Python loop: what a second kernel encoding, or a browser, does to a laptop."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def servers(names: list[str]) -> list[Server]:
    from rungs import model as llm

    model = str(llm.prepare(quiet=True))
    started = [Server(n, model) for n in names]
    for s in started:
        s.wait()
        s.ask([{"role": "user", "content": "Bonjour"}], max_tokens=2)  # warm: pages mapped, allocator grown
    return started


# ---------------------------------------------------------------- the measurements

def compare(data: dict, name: str, names: list[str], limit: int, busy: bool, rounds: int) -> dict:
    prompts = data["prompts"]["n3"][:limit]
    run = {"name": name, "measured": time.strftime("%Y-%m-%d %H:%M"), "busy": busy,
           "configs": {n: CONFIGS[n] for n in names}, "calls": []}
    neighbour = busy_neighbour() if busy else None
    started = servers(names)
    try:
        for r in range(rounds):
            for i, p in enumerate(prompts):
                shift = (i + r) % len(started)
                for s in started[shift:] + started[:shift]:
                    got = s.ask(p["messages"], json_schema=p["json_schema"], max_tokens=p["max_tokens"])
                    got.pop("logprobs")
                    run["calls"].append({"config": s.name, "prompt": p["id"], "round": r, **got,
                                         "load": round(os.getloadavg()[0], 2)})  # the machine's, said honestly
                    print(f"{s.name:<20} {p['id']} {got['seconds']:7.2f} s  in {got['prompt_tokens']} "
                          f"(reused {got['reused_tokens']}) out {got['output_tokens']}", flush=True)
    finally:
        for s in started:
            s.stop()
        if neighbour:
            neighbour.kill()
    return run


def _question(prompt: dict) -> str:
    return re.search(r"\nQuestion : (.*)\n", prompt["messages"][-1]["content"]).group(1)


def reuse(data: dict, config: str, limit: int) -> dict:
    """A question over passages just sent for another question, against the same prompt after other passages.

    The sibling is the frozen prompt with another question's words in its « Question : » line: the same
    passages and numbered sentences, what a knob cell that re-asks over the same passages sends."""
    prompts = data["prompts"]["n3"][:limit]
    run = {"name": f"reuse: {config}", "kind": "reuse", "measured": time.strftime("%Y-%m-%d %H:%M"),
           "configs": {config: CONFIGS[config]}, "calls": []}
    [server] = servers([config])
    try:
        for i, p in enumerate(prompts):
            other = prompts[(i + 1) % len(prompts)]
            text = p["messages"][-1]["content"].replace(f"Question : {_question(p)}\n", f"Question : {_question(other)}\n")
            sibling = {**p, "messages": [{"role": "user", "content": text}]}
            for before, label in ((other, "after other passages"), (sibling, "after the same passages")):
                server.ask(before["messages"], json_schema=before["json_schema"], max_tokens=before["max_tokens"])
                got = server.ask(p["messages"], json_schema=p["json_schema"], max_tokens=p["max_tokens"])
                got.pop("logprobs")
                run["calls"].append({"config": label, "prompt": p["id"], **got, "load": round(os.getloadavg()[0], 2)})
                print(f"{label:<24} {p['id']} {got['seconds']:7.2f} s in {got['prompt_tokens']} "
                      f"reused {got['reused_tokens']}", flush=True)
    finally:
        server.stop()
    return run


def logprobs_check(data: dict, reference: str, patched: str) -> dict:
    """The first token's top_logprobs with every logit computed, against the patched last-logits server."""
    started = servers([reference, patched])
    rows, worst = [], 0.0
    try:
        for p in data["prompts"]["decisions"]:
            got = {s.name: s.ask(p["messages"], max_tokens=1, logprobs=10) for s in started}
            tops = {n: {t["token"]: t["logprob"] for t in g["logprobs"]["content"][0]["top_logprobs"]}
                    for n, g in got.items()}
            a, b = tops[reference], tops[patched]
            same_tokens = list(a) == list(b)
            diff = max(abs(a[t] - b[t]) for t in a if t in b)
            worst = max(worst, diff)
            rows.append({"prompt": p["id"], "same_tokens_in_order": same_tokens, "max_abs_diff": diff,
                         "first": list(a)[:3], "seconds": {n: g["seconds"] for n, g in got.items()}})
            print(f"{p['id']:<28} same order {same_tokens}  max |Δ logprob| {diff:.2e}", flush=True)
    finally:
        for s in started:
            s.stop()
    return {"name": f"logprobs: {reference} vs {patched}", "kind": "logprobs",
            "measured": time.strftime("%Y-%m-%d %H:%M"), "rows": rows, "worst": worst}


# ---------------------------------------------------------------- the tables

def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _ratio(calls, base, field) -> float | None:
    """The median, over prompts, of this configuration's value over the reference's on the same prompt."""
    return _median([c[field] / statistics.median(base[c["prompt"]]) for c in calls
                    if c.get(field) is not None and base.get(c["prompt"])])


def _cell(value, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def summary(run: dict) -> dict:
    """Per configuration, the numbers the table shows (rounded as shown): kept in the results file beside the calls."""
    names = list(dict.fromkeys(c["config"] for c in run["calls"]))
    first = [c for c in run["calls"] if c["config"] == names[0]]
    base = {f: {} for f in ("seconds", "cpu_seconds")}
    for c in first:
        for f in base:
            if c.get(f) is not None:
                base[f].setdefault(c["prompt"], []).append(c[f])
    texts = {c["prompt"]: c["text_sha"] for c in first}
    rows = {}
    for n in names:
        calls = [c for c in run["calls"] if c["config"] == n]
        row = {"median_s": _median([c["seconds"] for c in calls]), "ratio_s": _ratio(calls, base["seconds"], "seconds"),
               "median_cpu_s": _median([c.get("cpu_seconds") for c in calls]),
               "ratio_cpu_s": _ratio(calls, base["cpu_seconds"], "cpu_seconds"),
               "prompt_tokens": _median([c["prompt_tokens"] for c in calls]),
               "reused_tokens": _median([c["reused_tokens"] for c in calls]),
               "output_tokens": _median([c["output_tokens"] for c in calls]),
               "same_text": f"{sum(texts.get(c['prompt']) == c['text_sha'] for c in calls)}/{len(calls)}"}
        rows[n] = {k: (round(v, 1 if k.startswith("median") else 2) if isinstance(v, float) else v)
                   for k, v in row.items()}
    return {"prompts": len(texts), "load": _median([c.get("load") for c in run["calls"]]), "rows": rows}


def table(run: dict) -> list[str]:
    if run.get("kind") == "logprobs":
        same = sum(r["same_tokens_in_order"] for r in run["rows"])
        return [f"**{run['name']}** ({run['measured']}): {len(run['rows'])} decision prompts, the top 10 tokens in "
                f"the same order on {same}; largest difference of a log-probability {run['worst']:.1e}."]
    done = summary(run)
    load = done["load"]
    out = [f"**{run['name']}** ({run['measured']}; {done['prompts']} prompts"
           f"{', a second busy process running' if run.get('busy') else ''}"
           f"{f', machine load {load:.1f} at the median' if load is not None else ''})", "",
           "| configuration | median s | × the first | median CPU s | × the first | prompt tokens | reused | "
           "output tokens | same text |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for n, r in done["rows"].items():
        out.append(f"| {n} | {_cell(r['median_s'], '.1f')} | {_cell(r['ratio_s'], '.2f')} | "
                   f"{_cell(r['median_cpu_s'], '.1f')} | {_cell(r['ratio_cpu_s'], '.2f')} | "
                   f"{_cell(r['prompt_tokens'], '.0f')} | {_cell(r['reused_tokens'], '.0f')} | "
                   f"{_cell(r['output_tokens'], '.0f')} | {r['same_text']} |")
    return out


def tables(data: dict) -> str:
    return "\n\n".join("\n".join(table(run)) for run in data["runs"])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", nargs="?", choices=["prompts", "run", "reuse", "logprobs"])
    p.add_argument("--tables", action="store_true", help="print the markdown tables of results/speed.json")
    p.add_argument("--name", default=None)
    p.add_argument("--configs", default="today,stock-last-logits")
    p.add_argument("--config", default="rungs-default")
    p.add_argument("--prompts", type=int, default=8)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--busy", action="store_true")
    a = p.parse_args()
    data = load()
    if a.tables:
        print(tables(data))
        return
    if a.what == "prompts" or "prompts" not in data:
        data["prompts"] = build_prompts()
        save(data)
    if a.what == "run":
        names = a.configs.split(",")
        data["runs"].append(compare(data, a.name or " vs ".join(names), names, a.prompts, a.busy, a.rounds))
    elif a.what == "reuse":
        data["runs"].append(reuse(data, a.config, a.prompts))
    elif a.what == "logprobs":
        data["runs"].append(logprobs_check(data, "today", "rungs-1t"))
    else:
        return
    save(data)
    print("\n".join(table(data["runs"][-1])))


if __name__ == "__main__":
    main()
