"""What N4's decisions and N5's research loop cost on the local model (calls, tokens, seconds).

Run:  .venv/bin/python benchmarks/bench_agents.py      (nothing else busy)

N4: one state (a question and its page), three typed questions: the chat backend
(one call for all three) against the logprob backend (one call each); then
reranking N2's top 10 for one question. N5: quick and research mode on five
handbook questions, per stage. The research answers vary from run to run (the
fence code is random per request); the costs are what this measures.
"""

import statistics
import time

from rungs import decide, hybrid, research

from rungs import model as llm
from rungs.lab.handbook import load_pages, load_questions
from rungs.core.documents import page_text
from rungs.model import server
from rungs import rerank

TYPED = {
    "repond": {"type": "noul", "instructions": "Le passage répond-il à la question du salarié ?"},
    "section": {"type": "choice", "instructions": "À quelle section du livret ce passage appartient-il ?",
                "criteria": ["Congés", "Rémunération", "Frais", "Autre"]},
    "pertinence": {"type": "score", "instructions": "Dans quelle mesure le passage répond-il à la question ?",
                   "criteria": ["hors sujet", "même thème", "en partie", "exactement"]},
}


def main():
    pages = load_pages()
    by_id = {p["id"]: p for p in pages}
    server.local_server()
    state = {"question": "Combien de jours de congés payés acquiert-on par mois ?",
             "passage": page_text(by_id["conges-payes"])[:450]}
    print("N4 — three typed questions about one state")
    for backend in ("chat", "logprobs"):
        decide.ask(state, TYPED, backend=backend)  # warm the prompt cache once
        start = time.perf_counter()
        out = decide.ask(state, TYPED, backend=backend)  # a Decision: its cost counts every call
        print(f"  {backend:<9} calls {out.cost.calls}  tokens in {out.cost.prompt_tokens:>4} "
              f"out {out.cost.output_tokens:>4}  {time.perf_counter() - start:5.1f} s  repaired {out.repaired}")
    retriever = hybrid.answer_retriever(pages)
    q = state["question"]
    top10 = [{"id": r.id, "title": r.title, "text": page_text(by_id[r.id])} for r in retriever.search(q, limit=10)]
    start = time.perf_counter()
    rerank.rerank(q, top10, max_chars=450)
    print(f"  rerank 10 pages (logprobs, relevance 0–3): {time.perf_counter() - start:.1f} s, 10 calls")

    print("\nN5 — five handbook questions")
    questions = [x["question"] for x in load_questions() if x["kind"] == "lexical"][::15][:5]
    search = research.default_retriever(pages)
    for mode in ("quick", "research"):
        asker = research.Researcher(pages, retriever=search, mode=mode)  # the retriever is built once
        seconds, calls, tokens, stages, statuses = [], [], [], {}, []
        for question in questions:
            out = asker.ask(question)  # an Answer: its cost counts every call, its trace the loop's stages
            seconds.append(out.trail.seconds)
            calls.append(out.cost.calls)
            tokens.append(out.cost.prompt_tokens + out.cost.output_tokens)
            statuses.append(out.status.value)
            for stage, s in out.trail.timings.items():
                stages.setdefault(stage, []).append(s)
        print(f"  {mode:<8} median {statistics.median(seconds):5.1f} s, {statistics.median(calls):.0f} calls, "
              f"{statistics.median(tokens):.0f} tokens per question; per stage (median s): "
              + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in stages.items())
              + "; " + ", ".join(f"{statuses.count(v)} {v}" for v in dict.fromkeys(statuses)))


if __name__ == "__main__":
    main()
