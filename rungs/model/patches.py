"""llama-cpp-python 0.3.36 as rungs serves it: logits for the last position only, logprobs kept, reuse reported.

What it is for: ``llama_cpp.server`` creates its model with ``logits_all=True`` unless told
otherwise, and then computes the output layer (a row of logits over the whole vocabulary, from a
matrix stored Q6_K with no fast x86 path) for *every* position of every prompt
(``benchmarks/results/speed.json`` measures what that costs an N3 answer). Only an answer given as logprobs needs logits, and only
those of the prompt's last position and of each generated token: exactly what llama.cpp
computes anyway to sample. With ``logits_all=False``, 0.3.36 neither keeps those rows
(``Llama.eval`` skips the copy: « sampling is done inside the sampler ») nor lets a request ask
for logprobs (``_create_completion`` raises « logprobs is not supported »). ``last_logits_llama``
makes the subclass that keeps them and lifts that refusal; the one request that would need the
prompt's own logits — the completions endpoint's ``echo`` with logprobs — stays refused.
``tests/test_llama_patches.py`` checks that the first token's top logprobs are those of
``logits_all=True`` on real decision prompts.

It also says what the prompt cache saved. llama-cpp-python reuses the longest common prefix of
the previous prompt; the server now reports how many prompt tokens were reused, as OpenAI does,
in ``usage.prompt_tokens_details.cached_tokens`` — and, in a stream, on the chunk that finishes
the answer (``usage`` with every count: the shipped server sends none in a stream).

Pinned: everything here reads 0.3.36's internals (``scores``, ``n_tokens``, ``eval``, the
refusal, the usage type). ``install`` does nothing on another version, and the launch then keeps
``logits_all=True`` (``rungs.model.launch``): slower, never wrong. Imported only inside the server
process (``python -m rungs.model llama-server``).

Cost: one row of logits (one float per word of the vocabulary) copied per evaluated batch; ``scores`` is allocated for the whole
context but its pages become memory only where a row is written.
"""

from __future__ import annotations

import sys

import numpy as np

from .contract import ModelError

#: The one llama-cpp-python version whose internals these patches were read from.
PINNED = "0.3.36"


def usage_details(usage: dict, reused: int | None) -> dict:
    """A usage object with the prompt tokens taken from the cache, as OpenAI reports them."""
    if reused is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": int(min(reused, usage.get("prompt_tokens", reused)))}
    return usage


class PromptLogprobsRefused(ModelError, ValueError):
    """Logprobs of an echoed prompt: they need every position's logits, and this server computes the last one's.

    A ValueError too: llama_cpp.server answers the request with its error, as it does its own refusals."""


class LastLogits:
    """Mixed into ``llama_cpp.Llama`` (``last_logits_llama``): ``logits_all=False`` computed, the rows a logprob
    answer reads kept, the prompt tokens reused from the cache counted."""

    def __init__(self, *args, logits_all: bool = False, **kwargs):
        super().__init__(*args, logits_all=logits_all, **kwargs)
        self.rungs_last_only = not self._logits_all  # a draft model forces every logit: left as shipped
        self.rungs_reused, self.rungs_prompt, self.rungs_generated, self.rungs_tokens = None, 0, 0, []
        if self.rungs_last_only:
            # Rows indexed by position, as with logits_all=True; only the ones written take memory.
            self.scores = np.zeros((self._n_ctx, self._n_vocab), dtype=np.single)
            # Read by exactly one line besides ours: the refusal of logprobs in _create_completion.
            self._logits_all = True

    def eval(self, tokens):
        if self.rungs_reused is None:
            self.rungs_reused = self.n_tokens  # a request's first evaluation starts after the reused prefix
        if not self.rungs_last_only:
            return super().eval(tokens)
        # 0.3.36's eval, with logits asked for the last position of each batch only, and that row kept.
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        for i in range(0, len(tokens), self.n_batch):
            batch = tokens[i: min(len(tokens), i + self.n_batch)]
            n_past, n_tokens = self.n_tokens, len(batch)
            self._batch.set_batch(batch=batch, n_past=n_past, logits_all=False)
            self._ctx.decode(self._batch)
            self.input_ids[n_past: n_past + n_tokens] = batch
            row = np.ctypeslib.as_array(self._ctx.get_logits_ith(-1), shape=(self._n_vocab,))
            self.scores[n_past + n_tokens - 1, :] = row
            self.n_tokens += n_tokens
            self._requires_eval = False

    def generate(self, tokens, *args, **kwargs):
        import llama_cpp

        self.rungs_reused, self.rungs_prompt, self.rungs_generated = None, len(tokens), 0
        self.rungs_tokens = []
        for token in super().generate(tokens, *args, **kwargs):
            if not llama_cpp.llama_vocab_is_eog(self._model.vocab, token):
                self.rungs_generated += 1  # counted as _create_completion counts: the end token is not one
                self.rungs_tokens.append(token)
            yield token

    def rungs_logprobs(self, top: int, text: str) -> dict:
        """The chat completion's ``logprobs``, as 0.3.36 writes them, from the rows each generated token was
        sampled from — not 0.3.36's own way, which takes the log-softmax of every row of the context and sorts
        the whole vocabulary in Python for every token (timed in benchmarks/README.md, « Logprobs in a moment »)."""
        content, said = [], ""
        for i, token in enumerate(self.rungs_tokens):
            if len(said) >= len(text):
                break  # a stop sequence cut the text: its tokens have no logprobs, as in 0.3.36
            row = self.scores[self.rungs_prompt - 1 + i]
            logprobs = row_logprobs(row)
            word = lambda t: self.detokenize([t], prev_tokens=self.rungs_tokens[:i]).decode("utf-8", errors="ignore")
            best = np.argpartition(row, -top)[-top:] if 0 < top < len(row) else np.arange(len(row))
            # 0.3.36 sorts (logprob, index) pairs, highest first: ties go to the higher index
            best = sorted(best.tolist(), key=lambda t: (float(logprobs[t]), t), reverse=True)[:top]
            tops = {word(t): float(logprobs[t]) for t in best}
            tops.update({word(token): float(logprobs[token])})
            content.append({"token": word(token), "bytes": None, "logprob": float(logprobs[token]),
                            "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in tops.items()]})
            said += word(token)
        return {"content": content, "refusal": None}

    def create_completion(self, prompt, *args, **kwargs):
        if self.rungs_last_only and kwargs.get("echo") and kwargs.get("logprobs") is not None:
            raise PromptLogprobsRefused("logprobs with echo need every prompt position's logits: this server "
                                        "computes the last position's only (rungs.model.patches)")
        return super().create_completion(prompt, *args, **kwargs)

    #: Read a whole answer's logprobs from the rows kept (``rungs_logprobs``); False: 0.3.36's own way, for the
    #: benchmark that times the two (benchmarks/bench_logprobs.py).
    rungs_fast_logprobs = True

    def create_chat_completion(self, *args, **kwargs):
        # Logprobs of a whole answer (not streamed): read here from the rows kept, 0.3.36's own way left out.
        fast = (self.rungs_fast_logprobs and self.rungs_last_only and bool(kwargs.get("logprobs"))
                and not kwargs.get("stream"))
        top = int(kwargs.get("top_logprobs") or 0)
        if fast:
            kwargs = {**kwargs, "logprobs": False, "top_logprobs": None}
        result = super().create_chat_completion(*args, **kwargs)
        if isinstance(result, dict):
            if fast:
                choice = result["choices"][0]
                choice["logprobs"] = self.rungs_logprobs(top, choice["message"].get("content") or "")
            usage_details(result.get("usage") or {}, self.rungs_reused)
            return result
        return self._usage_at_the_end(result)

    def _usage_at_the_end(self, chunks):
        for chunk in chunks:
            choices = chunk.get("choices") or [{}]
            if choices[0].get("finish_reason") is not None:
                done = self.rungs_generated
                chunk["usage"] = usage_details({"prompt_tokens": self.rungs_prompt, "completion_tokens": done,
                                                "total_tokens": self.rungs_prompt + done}, self.rungs_reused)
            yield chunk


def row_logprobs(row: np.ndarray) -> np.ndarray:
    """One row of logits as log-probabilities, computed as 0.3.36's ``Llama.logits_to_logprobs`` computes them."""
    peak = np.amax(row)
    shifted = np.subtract(row, peak if np.isfinite(peak) else 0, dtype=np.single)
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.sum(np.exp(shifted)))


def last_logits_llama(base):
    """The model class the server builds: ``LastLogits`` over ``base`` (``llama_cpp.Llama``, imported only in the
    server process and in the tests that compare the two)."""
    return type("LastLogits", (LastLogits, base), {"__doc__": LastLogits.__doc__})


def install() -> bool:
    """Patch llama_cpp, in this (server) process, before its server module is imported; False on another version."""
    import llama_cpp

    if llama_cpp.__version__ != PINNED:
        print(f"rungs: llama-cpp-python {llama_cpp.__version__} is not {PINNED}: served as shipped "
              "(logits for every position)", file=sys.stderr)
        return False
    from pydantic import ConfigDict
    from llama_cpp import llama_types

    # The response model of a chat completion drops keys it does not declare: let the usage keep its details.
    llama_types.CompletionUsage.__pydantic_config__ = ConfigDict(extra="allow")
    llama_cpp.Llama = last_logits_llama(llama_cpp.Llama)
    return True
