"""Property-based tests (Hypothesis): every public function, fed what a hostile user or model would send.

Each test states one invariant: the call either returns a result that keeps the
rung's promises — a ranking that passes ``rungs.retrieval.check_hits`` with ids
from the collection, cited ids among the ids sent, metrics in [0, 1] — or raises
an error of the collection's family (``RungsError``) whose message names the
argument at fault. Anything else (a raw ``KeyError``, ``RecursionError``,
``OverflowError``…) fails the test. Speed is checked as a ratio: for a linear
path, time(4n) / time(n) stays under 8 (a quadratic one gives about 16).

The inputs: strings from the whole of Unicode (lone surrogates, combining marks,
zero-width and direction characters, NUL, ligatures) mixed with FTS5 operators
and brackets; empty and large collections; every numeric edge (NaN, ±inf,
negative, huge, bool); wrong types; model replies built from a JSON grammar and
then mutated (cut, fenced, wrapped in prose, nested); streams split anywhere.
Model replies come from ``rungs.model.ScriptedClient`` and vectors from a small
deterministic encoder (test doubles): no test needs a model.

Profiles:

- ``ci`` (the default): bounded examples, ``derandomize=True`` — the same
  examples on every run, so CI is deterministic; the whole file runs in well
  under a minute.
- ``nightly``: ten times the examples, randomised (a new search every night).
  Select it with ``RUNGS_HYPOTHESIS_PROFILE=nightly``::

      RUNGS_HYPOTHESIS_PROFILE=nightly python -m pytest tests/test_properties.py -o addopts=""

Neither profile keeps an example database on disk.
"""

import json
import math
import os
import re
import tempfile
import unicodedata
import warnings
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from rungs import bm25, decide, fastbm25, fts, hybrid, passages, rag, research
from rungs.grounding.contract import check_answer

from rungs.core import errors

from rungs.lab import metrics as evaluate

from rungs.lab import handbook

from rungs.core import text
from rungs import vectors
from rungs.lab import tuning
from rungs.core.errors import BadArgument, RungsError
from rungs.model import ScriptedClient
from rungs.core.retrieval import Hit
from rungs.core.contract import check_hits
import doubles
from rungs.lab import answers
from rungs.grounding import replies
from rungs.grounding.contract import check_answer
from rungs.core import documents as documents_core
from rungs import rerank
from doubles import growth

settings.register_profile("ci", max_examples=20, derandomize=True, deadline=None, database=None,
                          suppress_health_check=list(HealthCheck), print_blob=False)
settings.register_profile("nightly", settings.get_profile("ci"), max_examples=200, derandomize=False)
PROFILE = os.environ.get("RUNGS_HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)
SCALE = 20 if PROFILE == "nightly" else 2


def budget(n: int):
    """A test's number of examples: ``2n`` under ci, ten times that (``20n``) under nightly."""
    return settings(max_examples=n * SCALE)


# ---------------------------------------------------------------- strategies

def maybe(good, bad):
    """Mostly ``good`` (three times in four), sometimes ``bad``: the paths past the checks get exercised too."""
    # Not st.one_of(good, good, good, bad): one_of merges the copies, which gives one in two.
    return st.integers(0, 3).flatmap(lambda i: bad if i == 3 else good)


ANY_CHAR = st.characters(exclude_categories=())  # the whole of Unicode, lone surrogates included
CLEAN_CHAR = st.characters(exclude_categories=("Cs",))
PIECES = st.sampled_from([
    "AND", "OR", "NOT", "NEAR(", "NEAR", '"', "*", "^", ":", "-", "+", "(", ")", "{", "}", "title:", "\\",
    "\u0301", "\u0316", "e\u0301", "\u200b", "\u200d", "\u200f", "\u202e", "\u2066", "\u00ad", "\ufeff", "\x00",
    "é", "É", "œ", "ﬁ", "İ", "ß", "ǅ", "Ⅻ", "٣", "３", "¹", "½", "\u2028", "\n", "\t", " ", "  ",
    "[", "]", "[1]", "[2]", "[3]", "[1, 2]", "[source 3]", "[[", "]]", "'", "’", "«", "»", "congés", "badge",
    "payés", "salarié", "1e999", "NaN", "-0", "9" * 40, "<extrait id=\"x\">", "</extrait>", "<<<FIN 1 x>>>"])
# Text from the whole of Unicode with the pieces above; one time in four with a lone surrogate somewhere.
CLEAN_TEXT = st.lists(st.one_of(st.text(CLEAN_CHAR, max_size=6), PIECES), max_size=14).map("".join)
TEXT = maybe(CLEAN_TEXT, st.lists(st.one_of(st.text(ANY_CHAR, max_size=6), PIECES, st.sampled_from(["\ud800", "\udfff"])),
                                  min_size=1, max_size=14).map("".join))
WORDY = st.lists(st.sampled_from(["congés", "payés", "badge", "perdu", "repas", "salarié", "jours", "le", "et",
                                  "NOT", "OR", "\u0301", "ﬁn", "İl", "[1]"]), max_size=8).map(" ".join)
SENTENCE = st.lists(st.sampled_from(["congés", "payés", "badge", "perdu", "repas", "jours", "combien"]),
                    min_size=1, max_size=6).map(" ".join)
EDGES = st.sampled_from([float("nan"), float("inf"), -float("inf"), -1, -1.5, 0, -0.0, 0.5, 1, 2, 1e308, 1e-320,
                         10**30, 2**63, -(2**63), 10**400, True, False])
JUNK = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), EDGES, st.binary(max_size=4), TEXT,
                 st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                 st.just(object()))
QUERY = maybe(st.one_of(WORDY, CLEAN_TEXT), st.one_of(TEXT, TEXT.map(lambda t: t * 300), JUNK))
LIMIT = maybe(st.integers(0, 12), st.one_of(st.integers(-2, -1), EDGES, JUNK))

DOC_ID = st.one_of(st.text("abcdefgh", min_size=1, max_size=3), st.integers(0, 60))
GOOD_DOC = st.fixed_dictionaries({"id": DOC_ID}, optional={"title": st.one_of(st.none(), WORDY, CLEAN_TEXT),
                                                           "body": st.one_of(st.none(), WORDY, CLEAN_TEXT),
                                                           "section": st.sampled_from(["A", "B", "C"])})
DOCS = st.lists(GOOD_DOC, max_size=8, unique_by=lambda d: str(d["id"]))
HOSTILE_DOCS = maybe(DOCS, st.one_of(st.lists(st.one_of(GOOD_DOC, JUNK, st.fixed_dictionaries(
    {"id": JUNK}, optional={"title": JUNK, "body": TEXT})), min_size=1, max_size=5), JUNK))


def outcome(call, *names):
    """The call's result; or its RungsError, whose message must name one of ``names`` if it is a BadArgument.

    Any exception outside the family propagates and fails the test with its own traceback.
    """
    try:
        result = call()
    except BadArgument as err:
        assert any(n in str(err) for n in names), f"BadArgument names none of {names}: {err}"
        event("BadArgument")
        return err
    except RungsError as err:
        event(type(err).__name__)  # --hypothesis-show-statistics: how often each outcome was reached
        return err
    event("result")
    return result


def ok(value):
    return not isinstance(value, BaseException)


class Letters(doubles.Letters):
    """The shared letters double, under a name of its own (its vectors are cached apart)."""

    name = "letters-property-double"


def doc_ids(docs):
    return {str(d["id"]) for d in docs}


def assert_ranking(hits, docs, limit):
    check_hits(hits)
    assert all(isinstance(h, Hit) for h in hits) and len(hits) <= limit
    assert {h.id for h in hits} <= doc_ids(docs)


# ---------------------------------------------------------------- the one tokenizer

def _short_mark_runs(t):
    return not re.search(r"[\u0300-\u036f\u0316]{4}", unicodedata.normalize("NFD", t))


# What a French handbook holds: Latin letters, accents composed or not, punctuation, and what a
# reader does not see (zero-width, direction marks). Outside the N1 = FTS5 promise, on purpose:
# ligatures and compatibility forms, which N1 spells out (« œ » → « oe », « ¹ » → « 1 ») and FTS5
# keeps, and scripts whose tables differ between SQLite's unicode61 and Python's unicodedata.
LATIN_CHARS = st.characters(max_codepoint=0x17F, exclude_categories=("Cs",), exclude_characters="ªº²³¹¼½¾ÆæßĲĳĿŀŉŒœ")
LATIN = st.lists(st.one_of(st.text(LATIN_CHARS, max_size=6),
                           st.sampled_from(["\u0301", "\u0300", "\u0327", "\u200b", "\u200f", "\u00ad", "\ufeff",
                                            "e\u0301", "congés", " ", "'", "’"])), max_size=12).map("".join)


@budget(60)
@given(t=maybe(st.one_of(TEXT, WORDY), JUNK),
       stopwords=maybe(st.one_of(st.sampled_from([None, True, False, "french"]), st.lists(WORDY, max_size=3)),
                       st.one_of(st.lists(JUNK, min_size=1, max_size=2), JUNK)),
       stem=maybe(st.sampled_from([None, True, "snowball"]), JUNK))
def test_tokenise_gives_folded_words_whatever_the_text_and_options(t, stopwords, stem):
    out = outcome(lambda: text.tokenise(t, stopwords=stopwords, stem=stem), "text", "stopwords", "stem")
    if ok(out):
        assert all(isinstance(w, str) and w and w == text.fold(w) for w in out)
        if isinstance(t, str) and _short_mark_runs(t):
            # The same text to a reader is the same text to the index (composed or decomposed accents).
            assert text.tokenise(unicodedata.normalize("NFD", t), stopwords=stopwords, stem=stem) == out
            assert text.tokenise(unicodedata.normalize("NFC", t), stopwords=stopwords, stem=stem) == out


@budget(40)
@given(t=LATIN)
def test_fts5_and_the_tokenizer_cut_the_same_words(t):
    """N1 = FTS5: a one-document index finds the document for each word tokenise cuts from its body."""
    assume(ok(outcome(lambda: errors.check_text(t, "t"), "t")) and "\x00" not in t)
    # N1 folds compatibility forms (« ﬁ » → « fi », « ¹ » → « 1 »); FTS5 does not: outside this property.
    assume(unicodedata.normalize("NFKD", t) == unicodedata.normalize("NFD", t))
    # « Ø » + acute composes to « Ǿ », a letter FTS5's table does not fold: outside the promise too.
    assume(all(ord(c) <= 0x17F for c in unicodedata.normalize("NFC", t)))
    words = text.tokenise(t)
    assume(words)
    index = fts.FtsIndex([{"id": "d", "body": t}])
    for w in words[:5]:
        assert [h.id for h in index.search(w)] == ["d"], (t, w)


# ---------------------------------------------------------------- retrievers

def _retrievers(docs):
    return {"fts": lambda: fts.FtsIndex(docs), "bm25": lambda: bm25.build_index(docs),
            "fast": lambda: fastbm25.FastBM25.from_documents(docs),
            "vectors": lambda: vectors.VectorIndex(docs, Letters(), cache=vectors.VectorCache(Letters(), folder=None))}


@budget(40)
@given(docs=HOSTILE_DOCS, query=QUERY, limit=LIMIT, kind=st.sampled_from(["fts", "bm25", "fast", "vectors"]))
def test_every_retriever_returns_a_ranking_or_names_the_argument(docs, query, limit, kind):
    index = outcome(_retrievers(docs)[kind] if isinstance(docs, list) else lambda: fts.FtsIndex(docs),
                    "documents", "[")
    if not ok(index):
        return
    hits = outcome(lambda: index.search(query, limit=limit), "query", "limit")
    if ok(hits):
        assert_ranking(hits, docs, limit)


KNOBS = st.fixed_dictionaries({}, optional={
    "k1": maybe(st.floats(0, 5), EDGES), "b": maybe(st.floats(0, 1), EDGES),
    "weights": maybe(st.one_of(st.none(), st.fixed_dictionaries({}, optional={"title": maybe(st.floats(0, 5), EDGES),
                                                                              "body": maybe(st.floats(0, 5), EDGES)})),
                     JUNK),
    "match": maybe(st.sampled_from(["any", "all"]), JUNK),
    "idf": st.sampled_from(["lucene", "fts5", "other"]), "lengths": st.sampled_from(["weighted", "unweighted", "lossy"]),
    "repeats": st.sampled_from(["once", "count"]), "saturation": st.sampled_from(["k1+1", "plain"])})


@budget(60)
@given(docs=DOCS, query=st.one_of(WORDY, TEXT), knobs=KNOBS, limit=st.integers(0, 10))
def test_bm25_and_its_fast_path_agree_or_name_the_knob(docs, query, knobs, limit):
    readable = outcome(lambda: bm25.build_index(docs), "documents")
    if not ok(readable):
        return
    names = ("k1", "b", "weights", "match", "idf", "lengths", "repeats", "saturation", "query")
    slow = outcome(lambda: readable.search(query, limit=limit, **knobs), *names)
    fast = outcome(lambda: fastbm25.FastBM25.from_index(readable).search(query, limit=limit, **knobs), *names)
    assert ok(slow) == ok(fast), (slow, fast)
    if ok(slow):
        assert_ranking(slow, docs, limit)
        assert_ranking(fast, docs, limit)
        assert [h.id for h in slow] == [h.id for h in fast]
        assert all(math.isclose(a.score, b.score, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(slow, fast))


FTS_EXPR = st.lists(st.one_of(st.sampled_from(["AND", "OR", "NOT", "NEAR(", ")", "(", '"', "*", "^", "title:",
                                               "{title}:", "-", "+", ","]), WORDY, TEXT), max_size=12).map(" ".join)


@budget(40)
@given(docs=DOCS, expression=maybe(FTS_EXPR, JUNK), weights=maybe(st.none(), JUNK), limit=LIMIT)
def test_raw_fts5_syntax_gives_hits_or_a_named_error(docs, expression, weights, limit):
    index = outcome(lambda: fts.FtsIndex(docs), "documents")
    if not ok(index):
        return
    hits = outcome(lambda: index.raw_search(expression, limit=limit, weights=weights), "expression", "limit",
                   "weights")
    if ok(hits):
        assert_ranking(hits, docs, limit)


@budget(30)
@given(docs=DOCS, query=maybe(WORDY, JUNK), k=maybe(st.floats(0, 100), st.one_of(EDGES, JUNK)),
       weights=maybe(st.one_of(st.none(), st.fixed_dictionaries({}, optional={
           "kw": st.floats(0, 3), "fts": st.floats(0, 3), "vec": st.floats(0.1, 3)})),
                     st.one_of(st.fixed_dictionaries({}, optional={"kw": EDGES, "fts": EDGES, "vec": EDGES}), JUNK)),
       window=maybe(st.integers(1, 20), st.one_of(st.integers(-1, 0), EDGES)),
       method=maybe(st.sampled_from(["rrf", "convex"]), JUNK),
       limit=st.integers(0, 10))
def test_hybrid_fuses_any_legs_into_a_ranking_or_names_the_knob(docs, query, k, weights, window, method, limit):
    legs = outcome(lambda: {"kw": bm25.build_index(docs), "fts": fts.FtsIndex(docs),
                            "vec": vectors.VectorIndex(docs, Letters(), cache=vectors.VectorCache(Letters(), None))},
                   "documents")
    if not ok(legs):
        return
    fused = hybrid.Hybrid(legs)
    hits = outcome(lambda: fused.search(query, limit=limit, k=k, leg_weights=weights, window=window, method=method),
                   "query", "k", "weights", "window", "method")
    if ok(hits):
        assert_ranking(hits, docs, limit)


RANKING = maybe(st.lists(st.one_of(st.sampled_from(list("abcdef")), st.integers(6, 9)), max_size=8, unique_by=str),
                st.lists(st.one_of(st.sampled_from(list("abcdef")), st.integers(0, 5), JUNK), max_size=8))


@budget(40)
@given(rankings=maybe(st.dictionaries(st.sampled_from(["x", "y", "z"]), maybe(RANKING, JUNK), max_size=3), JUNK),
       k=maybe(st.floats(0, 100), EDGES), window=maybe(st.one_of(st.none(), st.integers(1, 5)), EDGES))
def test_rrf_fuses_lists_of_ids_or_names_what_is_wrong(rankings, k, window):
    hits = outcome(lambda: hybrid.rrf(rankings, k=k, window=window), "ranking", "k", "window", "weights")
    if ok(hits):
        check_hits(hits)


@budget(20)
@given(docs=DOCS, size=maybe(st.integers(50, 400), EDGES), overlap=maybe(st.integers(0, 25), EDGES),
       query=maybe(WORDY, JUNK), knobs=st.fixed_dictionaries({}, optional={
           "rollup": maybe(st.sampled_from(["max", "sum"]), JUNK), "top": maybe(st.integers(1, 4), EDGES),
           "depth": maybe(st.integers(1, 50), EDGES), "level": st.sampled_from(["document", "passage"])}),
       limit=st.integers(0, 8))
def test_passages_roll_up_to_a_ranking_of_documents(docs, size, overlap, query, knobs, limit):
    pieces = outcome(lambda: passages.split(docs, size=size, overlap=overlap), "size", "overlap", "documents")
    if not ok(pieces):
        return
    # passages.split does not apply the document rule itself (a lone surrogate passes); the index does.
    index = outcome(lambda: bm25.build_index(pieces), "documents")
    if not ok(index):
        return
    retriever = passages.PassageRetriever(index, pieces)
    hits = outcome(lambda: retriever.search(query, limit=limit, **knobs), "query", "rollup", "top", "depth", "level")
    if ok(hits):
        check_hits(hits)
        allowed = {p["id"] for p in pieces} if knobs.get("level") == "passage" else doc_ids(docs)
        assert {h.id for h in hits} <= allowed and len(hits) <= limit


def _judge_reply(level, logprob):
    return {"text": str(level), "logprobs": [{"token": str(level), "logprob": -0.1, "top": {str(level): logprob}}]}


@budget(20)
@given(docs=DOCS, query=WORDY, depth=maybe(st.integers(1, 6), EDGES),
       replies=st.lists(st.builds(_judge_reply, maybe(st.integers(0, 3), st.sampled_from(["Oui", "x", " "])),
                                  maybe(st.floats(-5, 0), EDGES)), min_size=6, max_size=8))
def test_the_reranker_ranks_what_the_judge_read_or_says_why_not(docs, query, depth, replies):
    index = outcome(lambda: bm25.build_index(docs), "documents")
    if not ok(index):
        return
    reranker = outcome(lambda: rerank.Reranker(index, docs, client=ScriptedClient(replies), depth=depth), "depth")
    if not ok(reranker):
        return
    hits = outcome(lambda: reranker.search(query, limit=5), "query")
    if ok(hits):
        assert_ranking(hits, docs, 5)


# ---------------------------------------------------------------- model replies, from a grammar, then mutated

JSON_VALUE = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5)),
                          lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                  st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                          max_leaves=8)


def mutations(reply: st.SearchStrategy) -> st.SearchStrategy:
    """A reply as a model might garble it: cut short, fenced, wrapped in prose, nested, doubled, huge."""
    return st.one_of(
        reply,
        st.tuples(reply, st.integers(0, 200)).map(lambda r: r[0][:r[1]]),
        reply.map(lambda r: f"```json\n{r}\n```"), reply.map(lambda r: f"Voici : {r} Merci."),
        reply.map(lambda r: "[" * 2000 + r), reply.map(lambda r: r + r), reply.map(lambda r: "{" * 3000),
        st.integers(4200, 5200).map(lambda n: '{"answer": "x", "sources": [' + "7" * n + "]}"),
        TEXT, st.just(""), st.just("   "), st.just("x" * 150_000))


def rag_reply(sent_ids):
    answer = maybe(st.sampled_from(["Deux jours.", "Je ne sais pas.", "JE NE SAIS PAS !"]),
                   st.one_of(st.sampled_from(["", "   "]), TEXT, JUNK))
    source = maybe(st.sampled_from(sent_ids or ["nope"]), st.one_of(st.sampled_from(["nope", "3", "2"]), JUNK))
    good = st.fixed_dictionaries({"answer": answer, "sources": st.lists(source, min_size=1, max_size=3)})
    bad = st.one_of(st.fixed_dictionaries({}, optional={"answer": answer, "sources": JUNK}), JSON_VALUE)
    return maybe(good.map(lambda o: json.dumps(o, default=str)), mutations(bad.map(lambda o: json.dumps(o, default=str))))


@budget(60)
@given(data=st.data(), docs=HOSTILE_DOCS, question=maybe(SENTENCE, st.one_of(TEXT, JUNK)),
       attempts=maybe(st.integers(1, 3), st.one_of(st.integers(-1, 0), EDGES)),
       max_passages=maybe(st.integers(1, 4), st.one_of(st.integers(5, 6), EDGES)))
def test_rag_answers_cite_only_what_was_sent(data, docs, question, attempts, max_passages):
    sent_ids = [str(d["id"]) for d in docs[:4]] if isinstance(docs, list) and all(
        isinstance(d, dict) and "id" in d for d in docs) else []
    replies = data.draw(st.lists(rag_reply(sent_ids), min_size=1, max_size=3))
    client = ScriptedClient(replies)
    out = outcome(lambda: rag.answer(question, docs, client, attempts=attempts, mode="free",
                                     max_passages=max_passages),
                  "question", "attempts", "max_passages", "passages")
    if ok(out):
        check_answer(out)  # the answer contract, whatever the replies (rungs.grounding.contract)
        assert set(out.cited) <= set(out.sent) and len(out.sent) <= 4
        assert out.cost.calls == len(client.calls) <= attempts + 1  # the attempts, and one repair round trip


@budget(40)
@given(ids=st.lists(st.one_of(TEXT, st.integers()), min_size=1, max_size=4, unique_by=str),
       texts=st.lists(TEXT, min_size=4, max_size=4), question=WORDY)
def test_n3_prompt_has_one_block_per_passage_whatever_the_passages_say(ids, texts, question):
    sent = outcome(lambda: rag.prepare_passages([{"id": i, "text": t} for i, t in zip(ids, texts)]), "passages")
    if not ok(sent):
        return
    prompt = rag.build_prompt(question, sent)
    assert prompt.count("<extrait id=") == len(sent) and prompt.count("</extrait>") == len(sent)
    assert rag.schema_for(sent)["properties"]["sources"]["items"]["enum"] == [p["id"] for p in sent]


@budget(80)
@given(reply=maybe(mutations(JSON_VALUE.map(json.dumps)), st.one_of(TEXT, JUNK)))
def test_a_reply_is_an_object_or_no_answer_object_never_a_crash(reply):
    out = outcome(lambda: replies.extract_answer_object(reply))
    assert isinstance(out, (dict, replies.NoAnswerObject))
    decoded = outcome(lambda: rag.decode(reply))
    assert isinstance(decoded, (rag.FreeReply, replies.UnusableReply))
    if ok(decoded):
        assert decoded.answer.strip() and all(isinstance(s, str) for s in decoded.sources)


QUESTIONS = {"ok": {"type": "noul", "instructions": "Le passage répond-il ?"},
             "sec": {"type": "choice", "instructions": "Section ?", "criteria": ["conges", "paie"]},
             "rel": {"type": "score", "instructions": "Pertinence ?", "criteria": ["nulle", "faible", "bonne"]}}
PROB = st.one_of(st.floats(0, 1), EDGES, JUNK)


def _valid_decision(p, q, r, score):
    # A reply that keeps the contract: probabilities in [0, 1] that sum to 1 (up to the allowed drift).
    return {"ok": p, "sec": {"choice": "conges" if q >= 0.5 else "paie", "probs": {"conges": q, "paie": 1 - q}},
            "rel": {"score": score, "probs": {"0": r, "1": (1 - r) / 2, "2": (1 - r) / 2}}}


VALID_DECISION = st.builds(_valid_decision, st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 2))
DECISION = maybe(VALID_DECISION, st.fixed_dictionaries({}, optional={
    "ok": st.one_of(PROB, st.fixed_dictionaries({"p": PROB})),
    "sec": st.fixed_dictionaries({}, optional={"choice": st.one_of(st.sampled_from(["conges", "paie", "rh"]), JUNK),
                                              "probs": st.one_of(st.fixed_dictionaries({"conges": PROB, "paie": PROB}),
                                                                 JUNK)}),
    "rel": st.fixed_dictionaries({}, optional={"score": PROB, "probs": st.fixed_dictionaries(
        {"0": PROB, "1": PROB, "2": PROB}), "confidence": PROB})}))


@budget(60)
@given(replies=st.lists(maybe(DECISION.map(lambda d: json.dumps(d, default=str)),
                              mutations(DECISION.map(lambda d: json.dumps(d, default=str)))), min_size=2, max_size=2),
       state=maybe(st.one_of(WORDY, st.dictionaries(st.text(max_size=3), CLEAN_TEXT, max_size=3)), st.one_of(TEXT, JUNK)),
       knobs=st.fixed_dictionaries({}, optional={"max_tokens": maybe(st.integers(1, 500), EDGES),
                                                 "max_state_chars": maybe(st.integers(100, 10_000), EDGES)}))
def test_typed_decisions_are_valid_or_refused(replies, state, knobs):
    out = outcome(lambda: decide.ask(state, QUESTIONS, ScriptedClient(replies), **knobs),
                  "state", "max_tokens", "max_state_chars")
    if ok(out):
        a = out.answers
        assert out.cost.calls in (1, 2) and out.cost.output_tokens >= 0
        assert 0 <= a["ok"]["p"] <= 1 and a["sec"]["choice"] in ("conges", "paie")
        assert math.isclose(sum(a["sec"]["probs"].values()), 1, abs_tol=1e-6) and 0 <= a["rel"]["score"] <= 2


@budget(60)
@given(top=maybe(st.dictionaries(st.sampled_from(["Oui", " oui", "Non", "O", "N", "", "A", "1"]),
                                 st.floats(0.001, 1).map(lambda p: math.log(p / 8)), max_size=5),
                 st.one_of(st.dictionaries(st.one_of(st.sampled_from(["Oui", "Non"]), EDGES, st.none(), TEXT),
                                           st.one_of(st.floats(-10, 0), EDGES, JUNK), max_size=5), JUNK)))
def test_a_logprob_distribution_sums_to_one_with_coverage_in_0_1(top):
    out = outcome(lambda: decide.distribution(top, {"true": ["Oui", "oui"], "false": ["Non", "non"]}), "top")
    if ok(out):
        probs, coverage = out
        assert 0 <= coverage <= 1
        assert not probs or math.isclose(sum(probs.values()), 1, rel_tol=1e-9)


# ---------------------------------------------------------------- citations and the research loop

CITED_TEXT = st.lists(st.one_of(st.sampled_from(["[1]", "[2]", "[3]", "[1, 3]", "[ 2 ]", "[source 3]", "[[9]]",
                                                  "[note", "[", "]", "[３]", "[" + " " * 45 + "3]", "Voir ", " fin."]),
                                TEXT), max_size=12).map("".join)


@budget(80)
@given(t=CITED_TEXT, allowed=st.sets(st.integers(0, 4), max_size=3), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_no_citation_outside_the_gathered_set_whatever_the_stream_split(t, allowed, cuts):
    from rungs.research.ground import exponents

    checked = outcome(lambda: research.check_citations(t, allowed), "text")
    if not ok(checked):
        return
    whole, cited, removed = checked
    assert set(cited) <= allowed
    out = []
    f = research.CitationFilter(allowed, out.append)
    points = sorted({c % (len(t) + 1) for c in cuts})
    for a, b in zip([0, *points], [*points, len(t)]):
        f.feed(t[a:b])
    f.finish()
    # Every split of the stream gives the same text, once its exponents are read (as the report reads a sentence).
    assert exponents("".join(out), allowed)[0] == whole
    for group in re.findall(r"\[[^\[\]]*\]", whole):
        inner = group[1:-1]
        if any(ch.isnumeric() for ch in inner) or re.search("source|page|extrait", inner, re.I):
            numbers = [int(n) for n in re.findall(r"\d+", inner) if len(n) < 9]
            assert numbers and set(numbers) <= allowed and not re.search("[^\\d\\s,;]", inner), (group, whole)
    if "[" not in t:
        assert whole == exponents(t, allowed)[0]  # no bracket, only exponents to read: not another character is lost


PLAN = st.lists(st.fixed_dictionaries({"title": maybe(SENTENCE, JUNK), "todos": maybe(
    st.lists(SENTENCE, max_size=7), st.one_of(st.lists(JUNK, max_size=3), JUNK))}), max_size=7).map(
        lambda topics: json.dumps({"topics": topics}, default=str))


@budget(60)
@given(reply=maybe(st.one_of(PLAN, mutations(PLAN)), st.one_of(mutations(JSON_VALUE.map(json.dumps)), TEXT, JUNK)),
       question=maybe(SENTENCE, JUNK))
def test_a_plan_is_always_one_to_five_topics_of_queries(reply, question):
    out = outcome(lambda: research.parse_plan(reply, question), "question")
    if ok(out):
        plan, problem = out
        assert 1 <= len(plan) <= 5 and all(1 <= len(t["todos"]) <= 5 for t in plan)
        assert all(isinstance(q, str) and q.strip() for t in plan for q in t["todos"])


PAGES = handbook.load_pages()
INDEX = bm25.build_index(PAGES)


@budget(25)
@given(question=maybe(SENTENCE, st.one_of(TEXT, JUNK)), mode=maybe(st.sampled_from(["quick", "research"]), JUNK),
       bounds=st.fixed_dictionaries({}, optional={"rounds": maybe(st.integers(1, 9), EDGES),
                                                  "deadline": maybe(st.floats(1, 100), EDGES),
                                                  "tokens": maybe(st.integers(1, 50_000), EDGES),
                                                  "max_sources": maybe(st.integers(1, 12), EDGES),
                                                  "fusion_k": maybe(st.floats(0, 100), EDGES),
                                                  "follow_ups": maybe(st.booleans(), JUNK)}),
       replies=st.lists(st.one_of(PLAN, mutations(JSON_VALUE.map(json.dumps)), CITED_TEXT,
                                  st.lists(CITED_TEXT, max_size=5).map(lambda c: {"chunks": c}),
                                  st.just('{"continue": true, "queries": ["badge", "repas"]}')), max_size=6))
def test_the_research_loop_cites_only_what_it_gathered(question, mode, bounds, replies):
    names = ("question", "mode", "rounds", "deadline", "tokens", "max_sources", "fusion_k", "follow_ups")
    out = outcome(lambda: research.run(question, pages=PAGES, retriever=INDEX, client=ScriptedClient(replies),
                                       mode=mode, **bounds), *names)
    if ok(out):
        check_answer(out)  # the answer contract, whatever the replies
        assert set(out.cited) <= set(out.trace["gathered"]) and isinstance(out.text, str)
        if out.answered:
            whole, cited, _ = research.check_citations(out.text, set(range(1, len(out.trace["gathered"]) + 1)))
            assert whole == out.text  # what was shown passes the check again unchanged


# ---------------------------------------------------------------- metrics, splits, sweeps

RELEVANT = maybe(st.dictionaries(st.sampled_from(list("abcdef")), st.integers(0, 2), max_size=4),
                 st.one_of(st.dictionaries(st.one_of(st.sampled_from(list("abcdef")), st.integers(0, 5)),
                                           st.one_of(st.integers(0, 2), EDGES), max_size=4), JUNK))


@budget(80)
@given(ranking=maybe(RANKING, JUNK), relevant=RELEVANT, k=maybe(st.integers(1, 8), st.one_of(st.integers(-2, 0),
                                                                                              EDGES, JUNK)),
       metric=st.sampled_from(["rr", "recall", "precision", "ap", "ndcg"]))
def test_every_metric_is_in_0_1_or_names_what_would_make_it_lie(ranking, relevant, k, metric):
    fn = {"rr": evaluate.reciprocal_rank, "recall": evaluate.recall, "precision": evaluate.precision,
          "ap": evaluate.average_precision, "ndcg": evaluate.ndcg}[metric]
    value = outcome(lambda: fn(ranking, relevant, k), "ranking", "relevant", "at", "more than once")
    if ok(value):
        assert 0.0 <= value <= 1.0 + 1e-12


QUESTION = st.fixed_dictionaries({"id": st.sampled_from(["q1", "q2", "q3", "q4"]), "question": WORDY,
                                  "relevant": RELEVANT, "kind": st.sampled_from(["lexical", "paraphrase"])})


@budget(40)
@given(questions=maybe(st.lists(QUESTION, max_size=4, unique_by=lambda q: q["id"]), JUNK),
       run=maybe(st.sampled_from([lambda q: ["a", "b"], lambda q: [h for h in "fedcba"], lambda q: []]),
                 st.one_of(st.just(lambda q: None), st.just(lambda q: [1.5]), st.just({"q1": ["a"]}), JUNK)))
def test_evaluate_averages_metrics_in_0_1_or_names_the_junk(questions, run):
    out = outcome(lambda: evaluate.evaluate(run, questions), "ranking", "relevant", "questions", "run", "metric")
    if ok(out):
        assert all(0 <= out[m] <= 1 for m in evaluate.METRICS)


@budget(40)
@given(questions=maybe(st.lists(QUESTION, max_size=6, unique_by=lambda q: q["id"]), JUNK),
       seed=maybe(st.integers(), st.one_of(EDGES, JUNK)), answerable_only=maybe(st.booleans(), JUNK))
def test_a_split_is_a_deterministic_partition(questions, seed, answerable_only):
    out = outcome(lambda: tuning.halves(questions, seed=seed, answerable_only=answerable_only),
                  "seed", "answerable_only", "questions", "relevant", "kind")
    if ok(out):
        tune, held = out
        assert tuning.halves(questions, seed=seed, answerable_only=answerable_only) == out
        assert len({q["id"] for q in tune} & {q["id"] for q in held}) == 0


@budget(15)
@given(grid=maybe(st.dictionaries(st.sampled_from(["k1", "b", "match"]),
                                   maybe(st.lists(st.sampled_from([0.5, 1.2, "any"]), min_size=1, max_size=3),
                                         st.one_of(st.just([]), JUNK)), max_size=2), JUNK))
def test_a_sweep_tries_exactly_the_grid_or_names_it(grid):
    questions = [{"id": "q1", "question": "badge perdu", "relevant": {"badge": 2}}]
    out = outcome(lambda: tuning.sweep(grid, lambda q, **s: ["badge"], questions, progress=False), "param_grid")
    if ok(out):
        assert len(out) == math.prod(len(list(v)) for v in grid.values())


# ---------------------------------------------------------------- files a learner hands over

LINE = maybe(st.fixed_dictionaries({"id": maybe(st.text("qwxyz0123", min_size=1, max_size=3), JUNK),
                                    "question": maybe(CLEAN_TEXT, JUNK)}, optional={"relevant": RELEVANT}).map(
                                        lambda q: json.dumps(q, ensure_ascii=False, default=str)),
             st.one_of(TEXT, st.just("")))


@budget(40)
@given(lines=st.lists(LINE, max_size=5), raw=st.binary(max_size=40))
def test_a_question_file_loads_or_names_the_line(lines, raw):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, content in (("q.jsonl", "\n".join(lines).encode("utf-8", "surrogatepass")), ("raw.jsonl", raw)):
            (folder / name).write_bytes(content)
            out = outcome(lambda: handbook.load_questions(folder / name), name)
            if ok(out):
                assert all(isinstance(q["question"], str) and isinstance(q["relevant"], dict) for q in out)


@budget(30)
@given(body=st.binary(max_size=60), head=st.sampled_from([b"---\nid: a\ntitle: T\nsection: S\n---\n",
                                                          b"\xef\xbb\xbf---\nid: a\ntitle: T\nsection: S\n---\n",
                                                          b"---\nid: a\n", b""]))
def test_a_page_file_loads_or_names_the_file(body, head):
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "page.md").write_bytes(head + body)
        out = outcome(lambda: handbook.load_pages(tmp), "page.md")
    if ok(out):
        assert [p["id"] for p in out] == ["a"]


@budget(30)
@given(cut=st.integers(0, 2000), flip=st.integers(0, 2000), byte=st.integers(0, 255))
def test_a_damaged_vector_cache_is_never_trusted(cut, flip, byte):
    with tempfile.TemporaryDirectory() as tmp:
        _damaged_cache(Path(tmp), cut, flip, byte)


def _damaged_cache(folder, cut, flip, byte):
    texts = ["le badge", "les congés", "le repas"]
    vectors.VectorCache(Letters(), folder=folder).vectors_of(texts)
    file = folder / f"{Letters().fingerprint}.npz"
    data = bytearray(file.read_bytes())
    if data:
        data[flip % len(data)] = byte
    file.write_bytes(bytes(data[:cut] if cut < len(data) else data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", vectors.CacheCorrupted)
        got = vectors.VectorCache(Letters(), folder=folder).vectors_of(texts)
    assert np.isfinite(got).all() and np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-3)
    assert np.allclose(got, vectors.VectorCache(Letters(), folder=None).vectors_of(texts), atol=1e-3)


# ---------------------------------------------------------------- the checks themselves

@budget(80)
@given(value=JUNK, low=st.one_of(st.none(), st.integers(-5, 5)))
def test_the_checks_return_a_clean_value_or_name_it(value, low):
    for check in (lambda: errors.check_int(value, "knob", low=low), lambda: errors.check_number(value, "knob", low=low),
                  lambda: errors.check_query(value, name="knob"), lambda: errors.check_text(value, "knob"),
                  lambda: errors.check_choice(value, "knob", ("a", "b")), lambda: errors.check_names(value, "knob"),
                  lambda: errors.check_bool(value, "knob"), lambda: errors.check_limit(value)):
        outcome(check, "knob", "limit")


HELPERS = {
    "fold": (lambda a: text.fold(a), "word"), "words": (lambda a: text.words(a), "text"),
    "match_expression": (lambda a: fts.match_expression(a), "query"),
    "match_rule": (lambda a: fts.match_expression("x", a), "match"),
    "lucene_length": (lambda a: bm25.lucene_length(a), "n"), "idf": (lambda a: bm25.idf(10, a, "fts5"), "n_with"),
    "idf_kind": (lambda a: bm25.idf(10, 1, a), "idf"),
    "page_text": (lambda a: documents_core.page_text(a), "page"), "passage_text": (lambda a: documents_core.passage_text(a), "passage"),
    "check_vectors": (lambda a: vectors.check_vectors(a, 1, 3), "vectors"), "cache_for": (vectors.cache_for, "encoder"),
    "render_state": (decide.render_state, "state"), "check_questions": (decide.check_questions, "question"),
    "conform": (lambda a: decide.conform(a, QUESTIONS), "reply"), "answer_schema": (decide.answer_schema, "question"),
    "schema_for": (rag.schema_for, "passages"), "prompt": (lambda a: rag.build_prompt("q ?", a), "passages"),
    "ground": (lambda a: rag.ground(a, ["a"]), "reply"), "ground_ids": (lambda a: rag.ground(rag.FreeReply("x", ("a",)), a), "sent_ids"),
    "is_no_answer": (rag.is_no_answer, "text"), "check_bounds": (lambda a: research.check_bounds("quick", a), "bounds"),
    "score_answer": (lambda a: answers.score_answer(a, {"id": "q", "relevant": {"a": 2}, "key_facts": ["2 jours"]}), "answer"),
    "score_question": (lambda a: answers.score_answer("x", a), "question", "relevant"),
    "score_cited": (lambda a: answers.score_answer("x", {"id": "q", "relevant": {"a": 2}}, a), "cited"),
    "has_fact": (lambda a: answers.has_fact(a, "deux jours"), "fact"), "answer_words": (answers.answer_words, "text"),
    "paired_test": (lambda a: evaluate.paired_test(a, {"q": 0.5}), "a", "same questions"),
    "trials": (lambda a: evaluate.paired_test({"q": 1.0}, {"q": 0.0}, trials=a), "trials"),
    "holm": (evaluate.holm, "pvalues"), "needed": (lambda a: evaluate.questions_needed(a, 0.3), "diff"),
    "alpha": (lambda a: evaluate.questions_needed(0.1, 0.3, alpha=a), "alpha"),
    "compare": (lambda a: evaluate.compare(a, [], baseline="x"), "runs", "baseline"),
    # (None would mean the default client, the real model: never in a test)
    "client": (lambda a: rag.answer("q ?", [{"id": "a", "text": "t"}], object() if a is None else a), "client"),
}


@budget(80)
@given(helper=st.sampled_from(sorted(HELPERS)), value=JUNK)
def test_every_helper_returns_or_names_its_argument(helper, value):
    fn, *names = HELPERS[helper]
    outcome(lambda: fn(value), *names)


# ---------------------------------------------------------------- no quadratic trap

UNITS = st.one_of(st.sampled_from(["{", "[", "{a}", '{"a":', '"{', "[1", "[ ", "a\u0301\u0316", "é ", "]", "{[",
                                   '{"a": [', "x"]), st.text(ANY_CHAR, min_size=1, max_size=3))
PATHS = {"tokenise": text.tokenise, "words": text.words, "nfc": text.nfc, "decode": rag.decode,
         "extract": replies.extract_answer_object, "plan": lambda t: research.parse_plan(t, "question ?"),
         "citations": lambda t: research.check_citations(t, {1, 2})}


@budget(6)
@given(unit=UNITS, path=st.sampled_from(sorted(PATHS)))
def test_every_parser_is_linear_in_its_input(unit, path):
    """time(4n) / time(n) < 8 for inputs made of one unit repeated, below each path's cap."""
    fn = PATHS[path]
    n = max(1, 24_000 // len(unit))  # 4n stays under the replies' cap (replies.MAX_REPLY_CHARS)
    growth(fn, unit, unit * 2, repeat=1)  # warm up (first-use tables)
    ratios = []
    for _ in range(3):  # a quadratic path is slow every time; a busy machine only now and then
        # (4n taking under 2 ms counts as linear: below that the clock, not the path, is measured)
        ratios.append(growth(fn, unit * n, unit * (4 * n)))
        if ratios[-1] < 8:
            return
    raise AssertionError(f"{path} on {unit!r} × n: time(4n) / time(n) = {ratios}")
