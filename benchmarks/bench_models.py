"""What the model rungs cost on this machine: encoders (N2) and the local chat model (N3).

Run:  .venv/bin/python benchmarks/bench_models.py      (nothing else busy: 2 cores are easily shared)

Encoders: load time and pages/s on the 70 handbook pages, one thread, compared
in one run. Hybrid: one query with a warm cache. Chat model: server start,
time to first token (streamed) and to a full answer for three handbook questions.
"""

import time

from rungs import hybrid, rag, vectors

from rungs import model as llm
from rungs.lab.handbook import load_pages
from rungs.core.documents import page_text
from rungs.model import server


def main():
    pages = load_pages()
    texts = [page_text(p) for p in pages]
    print("encoder                    load s   pages/s  (70 pages, 1 thread, cold cache)")
    rates = {}
    for make in (vectors.USEEncoder, vectors.E5Encoder, lambda: vectors.SentenceTransformerEncoder("all-MiniLM-L6-v2")):
        start = time.perf_counter()
        enc = make()
        enc.encode_queries(["chargement"])
        load = time.perf_counter() - start
        start = time.perf_counter()
        enc.encode_documents(texts)
        rates[enc.name] = len(texts) / (time.perf_counter() - start)
        print(f"{enc.name:<26} {load:6.2f}  {rates[enc.name]:8.1f}")
    use = rates["use-multilingual-v3"]
    print("ratios to USE:", ", ".join(f"{n} {r / use:.2f}" for n, r in rates.items()))

    retriever = hybrid.answer_retriever(pages)  # built once: the pages are encoded here (or read from the cache)
    q = "Combien de vacances ai-je par an ?"
    retriever.search(q)  # warm
    runs = []
    for _ in range(20):
        start = time.perf_counter()
        retriever.search(q)
        runs.append(time.perf_counter() - start)
    print(f"hybrid query, warm cache: median {sorted(runs)[10] * 1e3:.1f} ms (budget 10 ms)")

    start = time.perf_counter()
    local = server.local_server()
    print(f"local server start: {time.perf_counter() - start:.1f} s")
    from openai import OpenAI
    sdk = OpenAI(base_url=local.base_url, api_key="none")
    by_id = {p["id"]: p for p in pages}
    for question in ["Combien de jours de congés payés acquiert-on par mois ?", "Qui paie mon taxi ?",
                     "Quel est le code du wifi pour les invités ?"]:
        ranking = retriever.search(question, limit=4)
        sent = rag.prepare_passages([{"id": r.id, "text": page_text(by_id[r.id])} for r in ranking])
        prompt = rag.build_prompt(question, sent)
        start = time.perf_counter()
        first, n = None, 0
        for chunk in sdk.chat.completions.create(model=llm.LOCAL_MODEL_NAME, messages=[{"role": "user", "content": prompt}],
                                                 temperature=0, seed=0, max_tokens=300, stream=True,
                                                 response_format={"type": "json_object", "schema": rag.schema_for(sent)}):
            if chunk.choices and chunk.choices[0].delta.content:
                first = first or time.perf_counter() - start
                n += 1
        total = time.perf_counter() - start
        print(f"answer: first token {first:5.1f} s, full {total:5.1f} s, {n} chunks  ({len(prompt)} prompt chars)  {question}")


if __name__ == "__main__":
    main()
