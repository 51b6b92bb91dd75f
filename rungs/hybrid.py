"""N2 — hybrid search: several rankings of the same collection, fused into one.

What it is for: keywords are exact and blind to paraphrase; vectors see
meaning and blur exact terms. ``Hybrid`` takes any retrievers (a keyword leg,
a vector leg, a second keyword leg with other knobs …), asks each for its top
``window``, and fuses the lists.

Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009) needs no
score calibration — it uses ranks only:

    fused(d) = Σ over legs L of  weight_L / (k + rank_L(d))      (ranks from 1)

A page absent from a list gets nothing from it. The constant ``k`` is the
knob: small k lets the very top of each list dominate, large k flattens the
ranks so that pages found by *both* legs win. 60 (``RRF_K``) is the paper's value and
Elasticsearch's default (``rank_constant``; its ``rank_window_size`` is our
``window``); Qdrant and Chroma count ranks from 0, so their k is off by one
from ours. k = 0 is allowed: ranks start at 1, so nothing divides by zero.
The knob is called ``k`` everywhere a learner turns it (``Hybrid``, ``rrf``,
``python -m rungs search --k``), as notebook 02 first shows it.

The alternative, ``method="convex"``: rescale each leg's scores to [0, 1]
(min–max over its window) and mix them, Σ weight_L × score_L / Σ weight_L.
It uses the scores' sizes, which RRF throws away — better when the scores are
meaningful, worse when one leg's scale drifts.

The third, ``method="lend"``: RRF whose weights move per question, on a signal the keyword leg already
has. ``coverage`` is the share of the question's words (as the keyword leg cut them: its hits' ``parts``)
that the keyword leg's best hit holds; the keyword leg keeps ``coverage`` of its weight and lends the rest
to the vector leg. A question worded like its page (coverage near 1) is fused as ``leg_weights`` say; a
paraphrase, whose words the best keyword page barely holds, is led by the vector leg. Each hit says what
was lent (``extra["lent"]``, and in words ``extra["lending"]``) beside its parts. It needs legs named ``keyword``
and ``vector``; nothing is lent when the coverage is unknown (keyword hits without parts) or the vector leg weighs 0.

Which fusion is best depends on the collection (on long documents a vector leg
weighted 1 can pull a good keyword ranking down): tune ``k``, ``leg_weights`` and
the method on your own questions, held out (notebook 06). Every fusion knob
is a search-time argument; each leg keeps its own knobs (``with_knobs``).

The two-leg recipe — a keyword leg and a vector leg, named ``keyword`` and
``vector``, fused by one setting — is written once, here: ``from_legs`` (legs
you already have: a folder's stored counts, a cache of vectors) and ``build``
(both legs made from documents). The answer rungs, your folder and the
sentences N3 points at all call it, each with its setting (``TEXTBOOK``,
``ANSWER_RETRIEVER``, ``YOUR_DOCUMENTS``).

Cost: each leg's own search, then a few dictionary operations per page.
"""

from __future__ import annotations
import math
import numbers
from collections.abc import Iterable, Mapping

from .core.errors import BadArgument, short_repr, check_choice, check_int, check_names, check_number
from .core.retrieval import Hit, Retriever, check_weights, ordered, ranking_ids

#: RRF's constant when nobody has tuned it: Cormack, Clarke and Büttcher's k = 60 (SIGIR 2009), Elasticsearch's
#: ``rank_constant`` default. Notebook 02 starts from it (§3, « the textbook setting »), and §10's protocol lists it
#: first, as the default a tuned setting must beat: there the answer rungs move to k = 5 on evidence
#: (``ANSWER_RETRIEVER``); for a collection nobody measured, ``YOUR_DOCUMENTS`` keeps 60 (never measurably worse
#: than BM25 alone on any question set we have: benchmarks/bench_default_fusion.py).
RRF_K = 60

#: The largest fusion constant worth trying: far past it every rank contributes almost the same.
MAX_K = 1e6


#: The fusions ``Hybrid`` knows (its ``method`` knob).
METHODS = ("rrf", "convex", "lend")

#: The largest weight a leg may have: far past every other leg, a fusion is one leg.
MAX_LEG_WEIGHT = 1e6


def _leg_weights(weights, names) -> dict[str, float]:
    return check_weights(weights, names, what="leg", high=MAX_LEG_WEIGHT, need_one=True)


def rrf(rankings: dict, *, k: float = RRF_K, leg_weights: dict | None = None, window: int | None = None) -> list[Hit]:
    """Fuse named rankings (lists of ids or of hits, best first) by reciprocal rank.

    Each hit: ``score`` (fused), ``parts`` (what each list contributed; they
    add up to the score) and ``extra["ranks"]`` (1-based rank in every list,
    ``None`` where absent). ``window``: only the first ``window`` of each list
    take part. A title found in any list is kept.
    """
    if not isinstance(rankings, dict):
        raise BadArgument(f"rankings must be a dict of name → ranking, not {type(rankings).__name__}")
    check_names(list(rankings), "the rankings' names")
    k = check_number(k, "k", low=0.0, high=MAX_K)
    if window is not None:
        window = check_int(window, "window", low=1)
    weights = _leg_weights(leg_weights, list(rankings)) if rankings else {}
    lists, titles = {}, {}
    for name, ranking in rankings.items():
        if isinstance(ranking, (str, bytes)):  # iterated, « abc » would be three pages a, b, c
            raise BadArgument(f"ranking {name!r} must be a list of ids or hits, not a string")
        if isinstance(ranking, dict) or not isinstance(ranking, Iterable):
            raise BadArgument(f"ranking {name!r} must be a list of ids or hits, not {type(ranking).__name__}")
        ranking = list(ranking)[:window] if window else list(ranking)
        ids = ranking_ids(ranking)
        if len(set(ids)) != len(ids):
            raise BadArgument(f"ranking {name!r} lists the same id twice: a page has one rank")
        for r in ranking:
            if not isinstance(r, (str, int)) and isinstance(r.get("title"), str) and r.get("title"):
                titles.setdefault(str(r["id"]), r["title"])
        lists[name] = ids
    fused: dict[str, dict] = {}
    for name, ids in lists.items():
        for rank, doc_id in enumerate(ids, start=1):
            entry = fused.setdefault(doc_id, {"ranks": dict.fromkeys(lists), "parts": dict.fromkeys(lists, 0.0)})
            entry["ranks"][name] = rank
            entry["parts"][name] = weights[name] / (k + rank)
    hits = [Hit(id=doc_id, title=titles.get(doc_id, ""), score=sum(e["parts"].values()), parts=e["parts"],
                extra={"ranks": e["ranks"]}) for doc_id, e in fused.items()]
    return ordered(hits)


def _minmax(hits) -> dict[str, float]:
    if not hits:
        return {}
    scores = [h.score for h in hits]
    low, high = min(scores), max(scores)
    if not high > low:  # one result, or all equal: they are all "the best" of their leg
        return {h.id: 1.0 for h in hits}
    if math.isinf(high - low):
        # Finite scores near ±1.7e308 whose spread overflows: halved, the spread fits and the ratio is the same.
        low, high, scores = low / 2, high / 2, [x / 2 for x in scores]
    return {h.id: (x - low) / (high - low) for h, x in zip(hits, scores)}


def convex(rankings: dict, *, leg_weights: dict | None = None) -> list[Hit]:
    """Σ weight_L × (leg L's score rescaled to [0, 1]) / Σ weights; a page absent from a leg gets 0 there."""
    if not isinstance(rankings, dict):
        raise BadArgument(f"rankings must be a dict of name → list of hits, not {type(rankings).__name__}")
    check_names(list(rankings), "the rankings' names")
    for name, hits in rankings.items():
        # The scores' sizes are what convex fusion uses: they must be there, finite, one per page.
        if not isinstance(hits, (list, tuple)) or not all(isinstance(h, Hit) for h in hits):
            raise BadArgument(f"ranking {name!r} must be a list of hits (convex fusion needs their scores)")
        if not all(math.isfinite(h.score) for h in hits):
            raise BadArgument(f"ranking {name!r} has a score that is not finite")
        if len({h.id for h in hits}) != len(hits):
            raise BadArgument(f"ranking {name!r} lists the same id twice: a page has one score")
    weights = _leg_weights(leg_weights, list(rankings)) if rankings else {}
    total = sum(weights.values()) or 1.0
    scaled = {name: _minmax(hits) for name, hits in rankings.items()}
    titles = {h.id: h.title for hits in rankings.values() for h in hits if h.title}
    ranks = {name: {h.id: r for r, h in enumerate(hits, start=1)} for name, hits in rankings.items()}
    out = []
    for doc_id in sorted({i for s in scaled.values() for i in s}):
        parts = {name: weights[name] * scaled[name].get(doc_id, 0.0) / total for name in rankings}
        out.append(Hit(id=doc_id, title=titles.get(doc_id, ""), score=sum(parts.values()), parts=parts,
                       extra={"ranks": {name: ranks[name].get(doc_id) for name in rankings}}))
    return ordered(out)


def coverage(hits) -> float | None:
    """The share of the question's words that the best keyword hit holds (its ``parts``: one per query word, 0
    where absent): 0 when the leg found nothing; None — unknown — when its best hit carries no parts (a leg that
    does not say per word what it matched: nothing tells us it missed, nor that it held every word)."""
    if not isinstance(hits, (list, tuple)):
        raise BadArgument(f"method='lend' reads the keyword leg's ranking as a list of Hits, not {type(hits).__name__}")
    if not hits:
        return 0.0
    if not isinstance(hits[0], Hit):
        raise BadArgument("method='lend' reads the keyword leg's per-word parts: its ranking must be Hits (a "
                          f"retriever's search), not {type(hits[0]).__name__} {short_repr(hits[0])}")
    parts = hits[0].parts or {}
    # A score per word, finite: a NaN would read as a word missed, a list or a text has no words to read.
    if not isinstance(parts, Mapping) or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                                                  and math.isfinite(v) for v in parts.values()):
        raise BadArgument(f"method='lend' reads the keyword hit's parts as finite scores per word, not {short_repr(parts)}")
    if not parts:
        return None
    return sum(1 for v in parts.values() if v > 0) / len(parts)


def lend(rankings: dict, *, k: float = RRF_K, leg_weights: dict | None = None) -> list[Hit]:
    """RRF where the keyword leg keeps ``coverage`` of its weight and lends the rest to the vector leg.

    Each hit says why the weights were what they were: ``extra["lent"]``, ``extra["coverage"]`` and, in words,
    ``extra["lending"]``. Nothing is lent when the coverage is unknown (the keyword hits carry no parts) or when
    the vector leg weighs 0 (a leg switched off stays off); the vector leg's weight stops at ``MAX_LEG_WEIGHT``.
    """
    if not isinstance(rankings, dict) or set(rankings) != {"keyword", "vector"}:
        raise BadArgument("method='lend' fuses two legs named 'keyword' and 'vector' (hybrid.from_legs makes them)")
    weights = _leg_weights(leg_weights, list(rankings))
    share = coverage(rankings["keyword"])
    if share is None:
        lent, why = 0.0, "coverage unknown (the keyword leg's best hit carries no per-word parts): nothing lent"
    elif weights["vector"] == 0:
        lent, why = 0.0, f"coverage {share:.2f}, but the vector leg weighs 0 (switched off): nothing lent"
    else:
        wanted = weights["keyword"] * (1.0 - share)
        lent = min(weights["vector"] + wanted, MAX_LEG_WEIGHT) - weights["vector"]
        why = f"coverage {share:.2f}: the keyword leg lends {lent:g} of its weight {weights['keyword']:g} to the vector leg"
        if weights["vector"] + wanted > MAX_LEG_WEIGHT:  # past the largest weight a leg may have
            why += f" (clipped: the vector leg's weight stops at MAX_LEG_WEIGHT, {MAX_LEG_WEIGHT:g})"
    moved = {"keyword": max(weights["keyword"] - lent, 0.0), "vector": min(weights["vector"] + lent, MAX_LEG_WEIGHT)}
    hits = rrf(rankings, k=k, leg_weights=moved)
    for h in hits:
        h.extra["lent"], h.extra["coverage"], h.extra["lending"] = lent, share, why  # why the weights were these
    return hits


class Hybrid(Retriever):
    """Fuse any number of retrievers (``legs``: name → retriever). Every fusion knob is search-time.

    Knobs: ``method`` (``"rrf"``, ``"convex"`` or ``"lend"``), ``k`` (RRF's constant),
    ``leg_weights`` (leg name → weight, 1 each unless given), ``window`` (how many
    hits each leg contributes; Elasticsearch's ``rank_window_size``).
    """

    name = "hybrid"
    defaults = {"method": "rrf", "k": RRF_K, "leg_weights": None, "window": 100}

    def __init__(self, legs: dict, **knobs):
        super().__init__()
        if not isinstance(legs, dict) or not legs:
            raise BadArgument("legs must be a non-empty dict of name → retriever")
        check_names(list(legs), "the legs' names")
        for name, leg in legs.items():
            if not isinstance(leg, Retriever):
                raise BadArgument(f"leg {name!r} is a {type(leg).__name__}, not a retriever "
                                  "(anything with search(query, *, limit))")
        self.legs = dict(legs)
        self.knobs = self._settings(knobs)

    def check_knobs(self, knobs: dict) -> dict:
        method = check_choice(knobs["method"], "method", METHODS)
        if method == "lend" and set(self.legs) != {"keyword", "vector"}:
            raise BadArgument("method='lend' needs two legs named 'keyword' and 'vector' (hybrid.from_legs makes them), "
                              f"not {', '.join(self.legs)}")
        return {"method": method,
                "k": check_number(knobs["k"], "k", low=0.0, high=MAX_K),
                "leg_weights": _leg_weights(knobs["leg_weights"], list(self.legs)),
                "window": check_int(knobs["window"], "window", low=1, high=100_000)}

    def leg_rankings(self, query: str, window: int | None = None) -> dict[str, list[Hit]]:
        """What each leg returned for ``query`` (its first ``window``): the inputs of the fusion."""
        window = self.knobs["window"] if window is None else check_int(window, "window", low=1, high=100_000)
        return {name: leg.search(query, limit=window) for name, leg in self.legs.items()}

    def _search(self, query, limit, knobs):
        rankings = self.leg_rankings(query, knobs["window"])
        if knobs["method"] == "convex":
            return convex(rankings, leg_weights=knobs["leg_weights"])[:limit]
        if knobs["method"] == "lend":
            return lend(rankings, k=knobs["k"], leg_weights=knobs["leg_weights"])[:limit]
        return rrf(rankings, k=knobs["k"], leg_weights=knobs["leg_weights"])[:limit]


#: The answer rungs' retriever (N3–N5), chosen in notebook 02 by the tuning lab's protocol on the handbook,
#: starting from BM25 alone and moving only on evidence from folds that did not pick it. Measured for
#: answer@4 (a page that answers among the four passages N3 sends): nothing on its grid beats it out of fold,
#: and on the final half it sends an answering page for more questions than BM25 alone. Not a constant to
#: trust on another collection: tune it on yours (notebook 07).
ANSWER_RETRIEVER = {"match": "any", "method": "rrf", "k": 5, "leg_weights": {"keyword": 1.0, "vector": 2.0}}


#: The hybrid for a collection nobody has tuned yet (``python -m rungs search/ask``, notebook 07): BM25 leads,
#: the vector leg weighs a quarter. Not the best anywhere; chosen because it was never measurably worse than
#: BM25 alone on any question set we have — the handbook (where it is better), and long real documents (the
#: GIMP manual in French, titles' and model-written questions), where a vector leg weighted like the keyword
#: one pulls a good keyword ranking down (benchmarks/README.md). Tune it on your own questions (notebook 07).
YOUR_DOCUMENTS = {"match": "any", "method": "rrf", "k": RRF_K, "leg_weights": {"keyword": 1.0, "vector": 0.25}}


#: The textbook fusion (notebook 02 §3): RRF at ``RRF_K``, the two legs weighed alike, the keyword leg's own matching
#: rule. N3 ranks the sentences it may send with it (``rungs.rag.pointing``).
TEXTBOOK = {"method": "rrf", "k": RRF_K, "leg_weights": {"keyword": 1.0, "vector": 1.0}}

#: What a setting may hold: the keyword leg's matching rule, and the fusion's knobs.
SETTING_KEYS = ("match", "method", "k", "leg_weights", "window")


def from_legs(keyword: Retriever, vector: Retriever, setting: dict | None = None, *,
              keyword_knobs: dict | None = None) -> Hybrid:
    """The one hybrid recipe: a keyword leg and a vector leg, named ``keyword`` and ``vector``, fused as ``setting``
    says (``TEXTBOOK`` unless given; ``ANSWER_RETRIEVER``, ``YOUR_DOCUMENTS`` or one you tuned).

    ``setting["match"]`` is the keyword leg's matching rule; ``keyword_knobs`` (``k1``, ``b``, ``match``…) override
    the keyword leg's knobs. Nothing is rebuilt: each leg is given its knobs by ``with_knobs``. Every knob is
    checked here, before the first search.
    """
    setting = TEXTBOOK if setting is None else setting
    if not isinstance(setting, dict) or set(setting) - set(SETTING_KEYS):
        raise BadArgument(f"a hybrid setting is a dict of {', '.join(SETTING_KEYS)}, like hybrid.TEXTBOOK; "
                          f"not {short_repr(setting)}")
    setting = dict(setting)  # the caller's dict is never changed
    if keyword_knobs is not None and not isinstance(keyword_knobs, dict):
        raise BadArgument(f"keyword_knobs must be a dict of the keyword leg's knobs, not {type(keyword_knobs).__name__}")
    own = {**({"match": setting.pop("match")} if "match" in setting else {}), **(keyword_knobs or {})}
    if not isinstance(keyword, Retriever) or not isinstance(vector, Retriever):
        raise BadArgument("from_legs needs two retrievers: a keyword leg and a vector leg")
    return Hybrid({"keyword": keyword.with_knobs(**own) if own else keyword, "vector": vector}, **setting)


def build(documents: list[dict], setting: dict | None = None, *, encoder=None, fields=("title", "body"),
          stopwords=True, stem=None) -> Hybrid:
    """BM25 (N1, ``rungs.bm25``) and the vector leg (N2, ``rungs.vectors``) over ``documents``, fused by
    ``from_legs``. ``fields``, ``stopwords``, ``stem``: the keyword leg's index; ``encoder``: the vector leg's."""
    from .bm25 import build_index
    from .vectors import VectorIndex

    keyword = build_index(documents, fields=fields, stopwords=stopwords, stem=stem)
    return from_legs(keyword, VectorIndex(documents, encoder), setting)


def answer_retriever(documents: list[dict], encoder=None) -> Hybrid:
    """The one retriever notebooks 03–05 (and ``python -m rungs ask``) retrieve with: BM25 + vectors, fused.

    The keyword leg drops French stop words; its matching rule and the
    fusion settings are ``ANSWER_RETRIEVER``, the setting notebook 02 chose on
    held-out questions — not a constant to trust on another collection.
    """
    return build(documents, ANSWER_RETRIEVER, encoder=encoder)
