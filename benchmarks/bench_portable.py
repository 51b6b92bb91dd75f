"""What portability costs: llama-cpp-python built portable (AVX2, run.sh's default) against other builds.

Run:  .venv/bin/python benchmarks/bench_portable.py --other native=/tmp/native/venv/bin/python
      (each --other NAME=PYTHON is a Python whose llama-cpp-python was built another way; build it
      in a venv outside the repository, e.g. `CMAKE_ARGS="" pip wheel --no-cache-dir --no-binary
      llama-cpp-python llama-cpp-python==0.3.36`; nothing else busy: 2 cores are easily shared)

The same model file, the same French RAG prompt (four handbook passages, ~1,000
tokens), the same 96 generated tokens, temperature 0, ONE thread; the model is
loaded in the library directly (no server, no HTTP). Each build runs in its own
process, builds alternate round after round so that a noisy neighbour hits
them all alike, and each process measures after one warm-up. Reported: the
median prompt reading rate (tokens/s) and generation rate (tokens/s), and the
ratio of each build to the portable one.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "portable.json"


def worker(model: str, runs: int) -> dict:
    """In the Python under test: load, warm up, then time prompt reading and generation separately."""
    import llama_cpp

    sys.path.insert(0, str(REPO))
    from rungs import rag
    from rungs.lab.handbook import load_pages
    from rungs.core.documents import page_text

    by_id = {p["id"]: p for p in load_pages()}
    passages = [{"id": i, "text": page_text(by_id[i])} for i in ("conges-payes", "rtt", "teletravail", "notes-de-frais")]
    prompt = rag.build_prompt("Combien de jours de congés payés acquiert-on par mois ?",
                              rag.prepare_passages(passages))
    start = time.perf_counter()
    llm = llama_cpp.Llama(model_path=model, n_threads=1, n_threads_batch=1, n_ctx=4096, seed=0, verbose=False)
    load = time.perf_counter() - start
    messages = [{"role": "user", "content": prompt + "\nPuis explique ta réponse en détail, en dix phrases."}]
    # Warm-up (page cache, allocator, CPU frequency), and the prompt's token count as the model counts it.
    llm.reset()
    warm = llm.create_chat_completion(messages, temperature=0, seed=0, max_tokens=8)
    n_prompt = warm["usage"]["prompt_tokens"]
    out = []
    for _ in range(runs):
        llm.reset()  # no prompt-prefix reuse: every run reads the whole prompt
        start, first, n = time.perf_counter(), None, 0
        for chunk in llm.create_chat_completion(messages, temperature=0, seed=0, max_tokens=96, stream=True):
            if chunk["choices"][0]["delta"].get("content"):
                first = first or time.perf_counter()
                n += 1
        out.append({"ttft": first - start, "gen_s": time.perf_counter() - first, "pieces": n})
    return {"system_info": llama_cpp.llama_print_system_info().decode(), "load_s": load, "runs": out,
            "prompt_tokens": n_prompt}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--other", action="append", default=[], metavar="NAME=PYTHON",
                   help="another build to compare, by the Python that has it")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=2, help="measured runs per process (after one warm-up)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a.model, a.runs)))
        return
    sys.path.insert(0, str(REPO))
    from rungs import model as llm

    model = str(llm.prepare(quiet=True))
    builds = {"portable": sys.executable, **dict(o.split("=", 1) for o in a.other)}
    found = {name: [] for name in builds}
    info = {}
    for r in range(a.rounds):
        for name, python in builds.items():
            done = subprocess.run([python, __file__, "--worker", "--model", model, "--runs", str(a.runs)],
                                  capture_output=True, text=True, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            info[name] = result
            found[name] += result["runs"]
            print(f"round {r + 1} {name:<10} " + "  ".join(
                f"ttft {x['ttft']:.2f} s gen {x['pieces'] / x['gen_s']:.1f}/s" for x in result["runs"]), flush=True)
    rows = {}
    for name, runs in found.items():
        n_prompt = info[name]["prompt_tokens"]
        rows[name] = {"prompt_tps": statistics.median(n_prompt / x["ttft"] for x in runs),
                      "gen_tps": statistics.median((x["pieces"] - 1) / x["gen_s"] for x in runs),
                      "runs": len(runs), "load_s": info[name]["load_s"],
                      "uses": " ".join(f.split(" =")[0].strip() for f in info[name]["system_info"].split("|")
                                       if f.strip().endswith("= 1") and ("AVX" in f or "AMX" in f))}
    base = rows["portable"]
    print(f"\n{'build':<10} {'prompt tok/s':>12} {'gen tok/s':>10} {'prompt ×':>9} {'gen ×':>7}  runs  SIMD used")
    for name, row in rows.items():
        print(f"{name:<10} {row['prompt_tps']:12.1f} {row['gen_tps']:10.1f} {row['prompt_tps'] / base['prompt_tps']:9.2f} "
              f"{row['gen_tps'] / base['gen_tps']:7.2f}  {row['runs']:>4}  {row['uses']}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"measured": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
