"""rungs.model.patches, for real: last-position logits answer logprobs as every-position logits do.

In process (no server): the bundled model loaded twice, once as llama-cpp-python ships it with
``logits_all=True``, once patched with ``logits_all=False``; the decision prompts are the ones
``benchmarks/bench_speed.py`` froze from ``decide.logprob_prompt`` (the reranker's judge over
handbook pages). The benchmark's ``logprobs`` check runs all ten through two servers.
"""

import json
from pathlib import Path

import pytest

from rungs import model as llm
from rungs.model import patches

pytestmark = [pytest.mark.model,
              pytest.mark.skipif(llm.llama_build()["version"] != patches.PINNED,
                                 reason=f"the patches are for llama-cpp-python {patches.PINNED}")]

PROMPTS = json.loads((Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "speed.json")
                     .read_text(encoding="utf-8"))["prompts"]


@pytest.fixture(scope="module")
def pair():
    import llama_cpp

    options = dict(model_path=str(llm.prepare(quiet=True)), n_ctx=1024, n_threads=1, n_threads_batch=1, seed=0,
                   verbose=False)
    every = llama_cpp.Llama(logits_all=True, **options)
    last = patches.last_logits_llama(llama_cpp.Llama)(logits_all=False, **options)
    yield every, last
    every.close()
    last.close()


def first_token(llama, messages) -> dict:
    out = llama.create_chat_completion(messages, temperature=0, seed=0, max_tokens=1, logprobs=True, top_logprobs=10)
    return {t["token"]: t["logprob"] for t in out["choices"][0]["logprobs"]["content"][0]["top_logprobs"]}


@pytest.mark.parametrize("n", [0, 1, 4, 7])
def test_the_first_tokens_top_logprobs_are_those_of_every_logit(pair, n):
    every, last = pair
    messages = PROMPTS["decisions"][n]["messages"]
    a, b = first_token(every, messages), first_token(last, messages)
    assert list(a) == list(b)  # the same ten tokens, in the same order
    assert max(abs(a[t] - b[t]) for t in a) < 1e-4


def test_a_longer_answer_keeps_its_logprobs_and_its_text(pair):
    every, last = pair
    messages = [{"role": "user", "content": "Écris les nombres de un à cinq, en lettres, séparés par des virgules."}]
    got = [llama.create_chat_completion(messages, temperature=0, seed=0, max_tokens=12, logprobs=True, top_logprobs=3)
           for llama in pair]
    assert got[0]["choices"][0]["message"]["content"] == got[1]["choices"][0]["message"]["content"]
    rows = [[(t["token"], t["logprob"]) for t in g["choices"][0]["logprobs"]["content"]] for g in got]
    assert len(rows[0]) == len(rows[1]) > 3
    assert all(x[0] == y[0] and abs(x[1] - y[1]) < 1e-4 for x, y in zip(*rows))


def test_the_prompt_tokens_reused_are_counted_and_reported(pair):
    _, last = pair
    first = PROMPTS["decisions"][0]["messages"]
    second = PROMPTS["decisions"][1]["messages"]  # the same question, another passage: the start is shared
    last.create_chat_completion(first, temperature=0, seed=0, max_tokens=1)
    usage = last.create_chat_completion(second, temperature=0, seed=0, max_tokens=1)["usage"]
    assert 10 < usage["prompt_tokens_details"]["cached_tokens"] < usage["prompt_tokens"]
    again = last.create_chat_completion(second, temperature=0, seed=0, max_tokens=1)["usage"]
    # The very same prompt right after itself: all of it (the last position's logits are still there).
    assert again["prompt_tokens_details"]["cached_tokens"] == again["prompt_tokens"]
    chunks = list(last.create_chat_completion(second, temperature=0, seed=0, max_tokens=3, stream=True))
    assert [c for c in chunks if c.get("usage")] == [chunks[-1]]
    assert chunks[-1]["usage"]["prompt_tokens"] == again["prompt_tokens"] and \
        chunks[-1]["usage"]["completion_tokens"] >= 1 and "prompt_tokens_details" in chunks[-1]["usage"]


def test_logprobs_of_an_echoed_prompt_stay_refused(pair):
    _, last = pair
    with pytest.raises(ValueError, match="echo"):
        last.create_completion("Bonjour", max_tokens=1, echo=True, logprobs=1)


def test_every_tokens_top_logprobs_are_those_of_every_logit(pair):
    """The patch reads a whole answer's logprobs from the rows it kept (0.3.36 sorts the vocabulary in Python for
    every token): the same tokens, the same ten alternatives in the same order, the same numbers — under a
    JSON schema too, as the sentence scorer asks."""
    messages = [{"role": "user", "content": "Cette phrase répond-elle à la question « Combien de jours ? » : "
                                            "« Vous avez 25 jours. » Réponds en JSON : {\"1\": \"oui\"} ou {\"1\": \"non\"}."}]
    schema = {"type": "json_object", "schema": {"type": "object", "properties": {"1": {"enum": ["oui", "en partie", "non"]}},
                                                "required": ["1"]}}
    for form in (None, schema):
        got = [llama.create_chat_completion(messages, temperature=0, seed=0, max_tokens=16, logprobs=True,
                                            top_logprobs=10, response_format=form) for llama in pair]
        rows = [g["choices"][0]["logprobs"]["content"] for g in got]
        assert got[0]["choices"][0]["message"]["content"] == got[1]["choices"][0]["message"]["content"]
        assert len(rows[0]) == len(rows[1]) > 2
        for a, b in zip(*rows):
            assert a["token"] == b["token"] and abs(a["logprob"] - b["logprob"]) < 1e-4
            assert [t["token"] for t in a["top_logprobs"]] == [t["token"] for t in b["top_logprobs"]]
            assert max(abs(x["logprob"] - y["logprob"]) for x, y in zip(a["top_logprobs"], b["top_logprobs"])) < 1e-4
