"""Logprobs in a moment: a whole answer's logprobs read from the rows the server kept, against 0.3.36's own way.

llama-cpp-python 0.3.36 answers ``logprobs=True`` by taking the log-softmax of every row of the context and
sorting the whole vocabulary (151,936 tokens) in Python for every token written. ``rungs.model.patches``
keeps only the rows it needs (``logits_all=False``) and reads each written token's top alternatives from its
row with a partial sort (``LastLogits.rungs_logprobs``). This times both, in one process, one thread, on the
ten decision prompts ``bench_speed.py`` froze (N4's yes/no judge over handbook pages: one token, its ten
best alternatives — what the gate and N4's logprob backend ask), alternating the two ways prompt by prompt so
a busy machine slows both alike; the answers' tokens and numbers are compared too.

    .venv/bin/python benchmarks/bench_logprobs.py      # writes results/logprobs.json

Cost: the bundled model loaded once; two calls a prompt, a few seconds each.
"""

from __future__ import annotations

import datetime
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rungs import model as llm  # noqa: E402
from rungs.model import patches  # noqa: E402

OUT = HERE / "results" / "logprobs.json"
PROMPTS = json.loads((HERE / "results" / "speed.json").read_text(encoding="utf-8"))["prompts"]["decisions"]


#: A longer answer with its logprobs, as a grader reading each written token's probability would ask.
LONGER = [{"role": "user", "content": "Écris les nombres de un à dix, en lettres, séparés par des virgules."}]


def timed(llama, messages, fast: bool, tokens: int = 1) -> tuple[float, list]:
    llama.rungs_fast_logprobs = fast
    llama.reset()  # the same prompt read whole by both ways: no cache reused from the other's call
    started = time.perf_counter()
    out = llama.create_chat_completion(messages, temperature=0, seed=0, max_tokens=tokens, logprobs=True,
                                       top_logprobs=10)
    took = time.perf_counter() - started
    said = out["choices"][0]["logprobs"]["content"]
    return took, [[(t["token"], round(t["logprob"], 4)) for t in token["top_logprobs"]] for token in said]


def main() -> int:
    import llama_cpp

    llama = patches.last_logits_llama(llama_cpp.Llama)(model_path=str(llm.prepare(quiet=True)), n_ctx=2048,
                                                       n_threads=1, n_threads_batch=1, seed=0, verbose=False)
    rows = []
    for i, prompt in enumerate(PROMPTS):
        order = (True, False) if i % 2 == 0 else (False, True)  # alternate which way goes first
        got = {fast: timed(llama, prompt["messages"], fast) for fast in order}
        rows.append({"prompt": i, "fast_seconds": round(got[True][0], 3), "shipped_seconds": round(got[False][0], 3),
                     "same_alternatives": got[True][1] == got[False][1]})
        print(rows[-1], flush=True)
    longer = []
    for i in range(4):  # twenty tokens written, each with its ten best alternatives
        order = (True, False) if i % 2 == 0 else (False, True)
        got = {fast: timed(llama, LONGER, fast, tokens=20) for fast in order}
        longer.append({"tokens": len(got[True][1]), "fast_seconds": round(got[True][0], 3),
                       "shipped_seconds": round(got[False][0], 3), "same_alternatives": got[True][1] == got[False][1]})
        print(longer[-1], flush=True)
    fast, shipped = [r["fast_seconds"] for r in rows], [r["shipped_seconds"] for r in rows]
    out = {"measured": f"{datetime.date.today()}, 1 thread, portable build", "rows": rows, "longer": longer,
           "longer_fast_median": statistics.median(r["fast_seconds"] for r in longer),
           "longer_shipped_median": statistics.median(r["shipped_seconds"] for r in longer),
           "fast_median": statistics.median(fast), "shipped_median": statistics.median(shipped),
           "ratio": round(statistics.median(shipped) / statistics.median(fast), 2),
           "every_answer_the_same": all(r["same_alternatives"] for r in rows + longer)}
    OUT.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print({k: v for k, v in out.items() if k != "rows"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
