"""``python -m rungs export``: a tuned rungs setting as Elasticsearch or OpenSearch index settings and a request.

What it is for: the last lesson of notebook 08 (*The same knobs on a real
engine*), and the README's « Past one machine, on paper » made by code. A
learner tunes k1, b, field weights, the matching rule, the fusion's method,
k, window and leg weights on the collection; ``export`` prints what an engine
needs to rank the same way:

- the index: one BM25 similarity with the same k1 and b on every text field,
  the analyzer closest to ``rungs.core.text.tokenise`` (runs of letters and
  digits, lower-cased, accents folded, French stop words, the Snowball stemmer
  when asked), and the vector field of the second leg;
- the request: the field weights as ``combined_fields`` boosts (BM25F, the
  model of rungs' weights: a title word counts ``weight`` body words, the
  length too), ``operator`` or/and for match any/all, and the fusion:
  Elasticsearch's ``rrf`` retriever (``rank_constant``, ``rank_window_size``, a
  ``weight`` per child) or ``linear`` retriever (``minmax``) for
  ``method="convex"``; OpenSearch's ``hybrid`` query through a search pipeline
  (``score-ranker-processor`` for RRF, ``normalization-processor`` for convex).

The bodies are built with the official clients' query builders
(``elasticsearch.dsl``, shipped inside ``elasticsearch``; ``opensearchpy``'s
DSL), so their shape is the client's: ``Q``, ``Search``, ``Index``, ``Mapping``,
``analyzer``. What a builder lacks is added through the builder's own
extension point (a ``Query`` subclass) or, where no builder exists (the
retriever tree, OpenSearch's pipeline), as a dict around the builder's output.

The traps, refused with ``NoEquivalent`` or written into ``notes`` where they
bite: an engine's RRF k (``rank_constant``) is an integer ≥ 1 (rungs accepts
k = 0 and 2.5); ``combined_fields`` boosts are ≥ 1; OpenSearch's weights add up
to 1 (rescaled: RRF's order does not change); Weaviate's ``alpha`` is a convex
weight between normalised scores, not an RRF weight; Qdrant and Chroma count
ranks from 0 (their k is ours plus 1); several shards score with each
shard's own idf unless ``search_type=dfs_query_then_fetch`` (``rungs.engine.shards``);
Lucene stores lengths in one byte (rungs' ``lengths="lossy"``).

What it costs: a few dicts; no server is contacted. The request's vector is
zeros unless one is given: it is the question encoded by the collection's
encoder, yours to compute and send.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field, replace

from .. import bm25, hybrid
from ..core.errors import BadArgument, RungsError, check_bool, check_choice, check_int, check_number, check_query
from ..core.retrieval import check_weights
from ..core.text import FRENCH_STOPWORDS

ENGINES = ("elasticsearch", "opensearch")
#: rungs' words are runs of letters or digits ([^\W_]+ in Python); in Java's regex, what separates them.
SEPARATORS = r"[^\p{L}\p{N}]+"
#: The question a learner sees exported when none is given (« how many days of paid leave a year? »).
QUESTION = "combien de jours de congés payés par an ?"


class NoEquivalent(RungsError, ValueError):
    """A rungs setting the engine cannot express; the message says which and what would be accepted."""


class ClientMissing(RungsError, ImportError):
    """The engine's Python client is not installed; the message names the package to install."""


@dataclass(frozen=True)
class Tuned:
    """A setting as a learner tuned it; the defaults are the collection's for a folder (``hybrid.YOUR_DOCUMENTS``)."""

    k1: float = bm25.KNOBS["k1"]
    b: float = bm25.KNOBS["b"]
    weights: dict = field(default_factory=lambda: {"title": 1.0, "body": 1.0})
    match: str = hybrid.YOUR_DOCUMENTS["match"]
    stopwords: bool = True   # python -m rungs search drops French stop words unless --keep-stopwords
    stem: bool = False
    method: str = hybrid.YOUR_DOCUMENTS["method"]
    k: float = hybrid.YOUR_DOCUMENTS["k"]
    window: int = hybrid.Hybrid.defaults["window"]
    legs: dict = field(default_factory=lambda: dict(hybrid.YOUR_DOCUMENTS["leg_weights"]))
    dims: int = 512          # the bundled USE encoder's vectors
    shards: int = 1

    @classmethod
    def from_knobs(cls, keyword: dict | None = None, fusion: dict | None = None, **build) -> "Tuned":
        """The knobs as a learner passes them to ``search``: ``keyword`` (k1, b, weights, match) and ``fusion``
        (method, k, window, leg_weights with legs « keyword » and « vector »); ``build``: stopwords, stem, shards."""
        keyword, fusion = dict(keyword or {}), dict(fusion or {})
        clean = bm25.check_knobs({**bm25.KNOBS, **keyword}, ("title", "body"))
        if clean["idf"] != "lucene":
            raise NoEquivalent("idf='fts5' (Robertson–Spärck Jones, floored at 1e-6) is not Lucene's BM25: an engine "
                               "would need a scripted similarity; use idf='lucene' (the default)")
        unknown = sorted(set(fusion) - {"method", "k", "window", "leg_weights"})
        if unknown:
            raise BadArgument(f"fusion knobs are method, k, window and leg_weights, not {', '.join(unknown)}")
        defaults = cls()
        legs = check_weights(fusion.get("leg_weights") or defaults.legs, ("keyword", "vector"), what="leg",
                             need_one=True)
        return cls(k1=clean["k1"], b=clean["b"], weights=clean["weights"], match=clean["match"],
                   method=fusion.get("method", defaults.method), k=fusion.get("k", defaults.k),
                   window=fusion.get("window", defaults.window), legs=legs, **build).checked()

    def checked(self) -> "Tuned":
        """Every knob checked for type and range by rungs' own rules; the engines' stricter ones come later."""
        check_number(self.k1, "k1", low=0.0, high=1000.0)
        check_number(self.b, "b", low=0.0, high=1.0)
        if not isinstance(self.weights, dict) or not self.weights:
            raise BadArgument(f"weights must be a dict of field → weight, like {{'title': 3, 'body': 1}}, "
                              f"not {self.weights!r}")
        check_weights(self.weights, list(self.weights))
        check_choice(self.match, "match", ("any", "all"))
        check_bool(self.stopwords, "stopwords")
        check_bool(self.stem, "stem")
        check_choice(self.method, "method", hybrid.METHODS)
        check_number(self.k, "k", low=0.0, high=hybrid.MAX_K)
        check_int(self.window, "window", low=1, high=10_000)
        if not isinstance(self.legs, dict) or set(self.legs) != {"keyword", "vector"}:
            raise BadArgument(f"legs must weigh 'keyword' and 'vector', not {self.legs!r}")
        check_weights(self.legs, ("keyword", "vector"), what="leg", need_one=True)
        check_int(self.dims, "dims", low=1, high=4096)
        check_int(self.shards, "shards", low=1, high=1024)
        return self


# ---------------------------------------------------------------- the traps, once for both engines

def rank_constant(setting: Tuned) -> int:
    """RRF's k as the engines take it: an integer of at least 1."""
    k = setting.k
    if k < 1:
        raise NoEquivalent(f"RRF k = {k:g} has no equivalent: Elasticsearch's and OpenSearch's rank_constant must be "
                           "at least 1 (rungs' k = 0 lets the first rank weigh 1, the second 1/2…); tune k from 1")
    if k != int(k):
        raise NoEquivalent(f"RRF k = {k:g}: the engines' rank_constant is an integer; tune k over whole numbers")
    return int(k)


def boosted_fields(setting: Tuned) -> list[str]:
    """The fields with their weights as ``combined_fields`` boosts (``title^3``); a weight below 1 is refused."""
    out = []
    for name, w in setting.weights.items():
        if w < 1:
            # combined_fields counts a term « boost times » in one synthetic field: less than once means nothing.
            raise NoEquivalent(f"weights[{name!r}] = {w:g}: combined_fields accepts boosts of at least 1; raise every "
                               "weight so that the smallest is 1 (this changes BM25's saturation: tune again)")
        out.append(name if w == 1 else f"{name}^{w:g}")
    return out


def analysis_chain(setting: Tuned) -> list[tuple[str, str, dict]]:
    """The token filters, in order, as (name, type, parameters): ``rungs.core.text.tokenise`` as near as it goes.

    rungs folds a word, drops it if it is a stop word, stems the *accented* word and folds the stem.
    Without stemming, lowercase → asciifolding → the same (folded) stop list is the same cut. With
    stemming, the stop words go before folding (Snowball needs the accents): the accented list
    (``_french_``) and rungs' folded one, then the stemmer, then folding — the closest, not the same.
    No ``elision`` filter: the pattern tokenizer already cuts at the apostrophe (« l'entreprise » →
    « l », « entreprise »), and « l » is one of rungs' stop words.
    """
    chain = [("lowercase", "lowercase", {})]
    stops = ("rungs_stop", "stop", {"stopwords": sorted(FRENCH_STOPWORDS)})
    if setting.stem:
        if setting.stopwords:
            chain += [("rungs_stop_accented", "stop", {"stopwords": "_french_"}), stops]
        chain += [("rungs_stemmer", "snowball", {"language": "French"}), ("asciifolding", "asciifolding", {})]
    else:
        chain += [("asciifolding", "asciifolding", {})] + ([stops] if setting.stopwords else [])
    return chain


def summing_to_one(setting: Tuned) -> list[float]:
    """The legs' weights rescaled to add up to 1, as OpenSearch requires (RRF's and convex's order do not change)."""
    total = setting.legs["keyword"] + setting.legs["vector"]
    return [setting.legs["keyword"] / total, setting.legs["vector"] / total]


def notes(setting: Tuned, engine: str) -> list[str]:
    """The traps that bite this setting on this engine, in a sentence each (printed with the bodies)."""
    out = []
    if setting.legs["vector"] and setting.method == "lend":  # no engine moves its weights per question
        out.append("method='lend' is exported as RRF with these weights (rungs' fusion when the keyword leg's best hit "
                   "holds every word); per query, move to the vector leg the share of words that hit missed, yourself.")
    if setting.legs["vector"] and setting.method in ("rrf", "lend"):
        k = rank_constant(setting)
        # Qdrant's 1/(k' + rank from 0) is 1/((k' + 1) + rank from 1): its k' is ours plus 1.
        out.append(f"RRF k = {k} is rank_constant {k} (ranks from 1, as in rungs; an engine's must be ≥ 1). "
                   f"Qdrant and Chroma count ranks from 0: there the same fusion is k = {k + 1}.")
        out.append("leg weights multiply each leg's 1/(k + rank); Weaviate's alpha is something else: a convex weight "
                   "between normalised scores (rungs' method='convex'), not an RRF weight.")
    if setting.legs["vector"] and setting.method == "convex":
        out.append("method='convex' is min–max per leg then a weighted mean; Weaviate's alpha is this kind of weight: "
                   f"alpha = {summing_to_one(setting)[1]:g} (the vector leg's share).")
    if engine == "opensearch" and setting.legs["vector"]:
        out.append("OpenSearch's weights must add up to 1: rescaled (the ranking does not change).")
    out.append(f"{setting.shards} shard{'s' if setting.shards > 1 else ''}: " + ("idf and lengths are the whole index's, as on one machine." if
               setting.shards == 1 else "each shard scores with its own idf unless search_type=dfs_query_then_fetch "
               "gathers the statistics first (set in params): rungs.engine.shards shows the difference."))
    out.append("Lucene stores each length in one byte (rungs' lengths='lossy') and drops BM25's (k1 + 1) factor "
               "(a constant: the ranking is unchanged); its scores are float32, rungs' float64.")
    out.append("one engine document per rungs passage (title and passage text); the vector is zeros here: send "
               f"the question encoded by the collection's encoder ({setting.dims} numbers).")
    return out


# ---------------------------------------------------------------- Elasticsearch (elasticsearch.dsl)

def _client(name: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        package = {"elasticsearch.dsl": "elasticsearch", "opensearchpy": "opensearch-py"}[name]
        raise ClientMissing(f"{name} is not installed: pip install {package} (requirements.txt lists it)") from None


def _text_fields(dsl, setting: Tuned, mapping, text_field) -> None:
    """Every text field with rungs' analyzer and the one BM25 similarity, built with the client's own helpers."""
    words = dsl.analyzer("rungs_text", tokenizer=dsl.tokenizer("rungs_words", "pattern", pattern=SEPARATORS),
                         filter=[name if not params else dsl.token_filter(name, kind, **params)
                                 for name, kind, params in analysis_chain(setting)])
    for name in setting.weights:
        mapping.field(name, text_field(analyzer=words, similarity="rungs_bm25"))


def elasticsearch(setting: Tuned, question: str = QUESTION, *, vector=None, index: str = "docs",
                  size: int = 5) -> dict:
    """``index`` (body of PUT <index>), ``search`` (body of GET <index>/_search), ``params`` (its URL), ``notes``."""
    dsl = _client("elasticsearch.dsl")
    from elasticsearch.dsl.field import DenseVector, Keyword, Text

    setting, question = setting.checked(), check_query(question)
    mapping = dsl.Mapping()
    mapping.field("path", Keyword())
    _text_fields(dsl, setting, mapping, Text)
    mapping.field("vector", DenseVector(dims=setting.dims, similarity="cosine", index=True))
    idx = dsl.Index(index)
    # One BM25 for every text field: Lucene's BM25Similarity is rungs' LUCENE preset (defaults 1.2, 0.75).
    idx.settings(number_of_shards=setting.shards,
                 similarity={"rungs_bm25": {"type": "BM25", "k1": setting.k1, "b": setting.b}})
    idx.mapping(mapping)
    keywords = dsl.Q("combined_fields", query=question, fields=boosted_fields(setting),
                     operator="and" if setting.match == "all" else "or")
    search = dsl.Search(index=index).extra(size=size)
    if setting.legs["vector"] == 0:
        search = search.query(keywords)  # one leg: no fusion, plain BM25
    else:
        search = search.extra(retriever=_es_fusion(setting, keywords, _vector(setting, vector)))
    return {"index": idx.to_dict(), "search": search.to_dict(), "params": _params(setting),
            "notes": notes(setting, "elasticsearch")}


def _es_fusion(setting: Tuned, keywords, vector) -> dict:
    # The retriever tree has no builder in elasticsearch.dsl (9.x): a dict around the builder's query.
    window = setting.window
    legs = [("keyword", {"standard": {"query": keywords.to_dict()}}),
            ("vector", {"knn": {"field": "vector", "query_vector": vector, "k": window,
                                "num_candidates": max(window, 10 * window)}})]
    if setting.method == "convex":
        # The linear retriever: each leg min–max normalised, then weighted and added (rungs divides by the
        # sum of the weights too: the same order).
        return {"linear": {"retrievers": [{"retriever": tree, "weight": setting.legs[name], "normalizer": "minmax"}
                                          for name, tree in legs], "rank_window_size": window}}
    # A weight per child, {"retriever": …, "weight": w}: Elasticsearch's weighted RRF (9.2 and later).
    children = [{"retriever": tree, "weight": setting.legs[name]} for name, tree in legs]
    return {"rrf": {"retrievers": children, "rank_constant": rank_constant(setting), "rank_window_size": window}}


def _params(setting: Tuned) -> dict:
    # Several shards: each scores with its own idf unless the statistics are gathered first (rungs.engine.shards).
    return {"search_type": "dfs_query_then_fetch"} if setting.shards > 1 else {}


# ---------------------------------------------------------------- OpenSearch (opensearchpy's DSL)

def _opensearch_queries():
    """opensearch-py's DSL has no ``combined_fields``, ``hybrid`` or ``knn``: registered through its own Query class."""
    from opensearchpy.helpers import query

    if "hybrid" not in query.Query._classes:
        class CombinedFields(query.Query):  # OpenSearch lists it among its full-text queries
            name = "combined_fields"

        class Knn(query.Query):  # the k-NN plugin's query: {"knn": {field: {"vector": […], "k": …}}}
            name = "knn"

        class Hybrid(query.Query):  # the neural-search plugin's query: its sub-queries are fused by a pipeline
            name = "hybrid"
            _param_defs = {"queries": {"type": "query", "multi": True}}

    return query.Q


def opensearch(setting: Tuned, question: str = QUESTION, *, vector=None, index: str = "docs", size: int = 5,
               pipeline: str = "rungs-hybrid") -> dict:
    """``index``, ``pipeline`` (PUT _search/pipeline/<name>), ``search``, ``params``, ``notes`` for OpenSearch ``2.19`` and later."""
    dsl = _client("opensearchpy")
    from opensearchpy.helpers.field import Keyword, KnnVector, Text

    Q = _opensearch_queries()
    setting, question = setting.checked(), check_query(question)
    mapping = dsl.Mapping()
    mapping.field("path", Keyword())
    _text_fields(dsl, setting, mapping, Text)
    mapping.field("vector", KnnVector(dimension=setting.dims, space_type="cosinesimil"))
    idx = dsl.Index(index)
    idx.settings(number_of_shards=setting.shards, knn=True,
                 similarity={"rungs_bm25": {"type": "BM25", "k1": setting.k1, "b": setting.b}})
    idx.mapping(mapping)
    keywords = Q("combined_fields", query=question, fields=boosted_fields(setting),
                 operator="and" if setting.match == "all" else "or")
    out = {"index": idx.to_dict(), "pipeline": None, "params": _params(setting), "notes": notes(setting, "opensearch")}
    if setting.legs["vector"] == 0:
        return {**out, "search": dsl.Search(index=index).query(keywords).extra(size=size).to_dict()}
    knn = Q("knn", vector={"vector": _vector(setting, vector), "k": setting.window})
    # pagination_depth: how many hits each sub-query keeps per shard (Elasticsearch's window is per retriever).
    hybrid_query = Q("hybrid", queries=[keywords, knn], pagination_depth=setting.window)
    return {**out, "pipeline": _os_pipeline(setting), "params": {**out["params"], "search_pipeline": pipeline},
            "search": dsl.Search(index=index).query(hybrid_query).extra(size=size).to_dict()}


def _os_pipeline(setting: Tuned) -> dict:
    # No builder for pipelines in opensearch-py: the dict client.search_pipeline.put sends.
    weights = summing_to_one(setting)
    if setting.method == "convex":
        processor = {"normalization-processor": {"normalization": {"technique": "min_max"}, "combination": {
            "technique": "arithmetic_mean", "parameters": {"weights": weights}}}}
    else:
        processor = {"score-ranker-processor": {"combination": {
            "technique": "rrf", "rank_constant": rank_constant(setting), "parameters": {"weights": weights}}}}
    return {"description": f"rungs: {setting.method} of the keyword and vector legs",
            "phase_results_processors": [processor]}


def _vector(setting: Tuned, vector) -> list[float]:
    """The question encoded by the collection's encoder; without one, zeros to replace (the shape is what is shown)."""
    if vector is None:
        return [0.0] * setting.dims
    if not isinstance(vector, (list, tuple)) or len(vector) != setting.dims:
        raise BadArgument(f"vector must be a list of {setting.dims} numbers (the question encoded), "
                          f"not {type(vector).__name__} of {len(vector) if hasattr(vector, '__len__') else '?'}")
    return [check_number(v, "vector[i]") for v in vector]


def export(setting: Tuned | None = None, question: str = QUESTION, *, engine: str = "elasticsearch",
           **options) -> dict:
    """The engine's bodies for ``setting`` (default: the collection's) and ``question``."""
    check_choice(engine, "engine", ENGINES)
    setting = Tuned() if setting is None else setting
    if not isinstance(setting, Tuned):
        raise BadArgument(f"setting must be an export.Tuned (Tuned.from_knobs), not {type(setting).__name__}")
    return (elasticsearch if engine == "elasticsearch" else opensearch)(setting, question, **options)


def dumps(bodies: dict) -> str:
    """JSON, indented, each list of numbers or words on one line (a 512-number vector is one line, not 512)."""
    flat: dict = {}

    def mark(value):
        if isinstance(value, dict):
            return {k: mark(v) for k, v in value.items()}
        if isinstance(value, list):
            if len(value) > 4 and all(isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in value):
                key = f"@list{len(flat)}@"
                flat[key] = json.dumps(value, ensure_ascii=False)
                return key
            return [mark(v) for v in value]
        return value

    text = json.dumps(mark(bodies), indent=2, ensure_ascii=False)
    for key, compact in flat.items():
        text = text.replace(json.dumps(key), compact)
    return text


EXAMPLES = """\
the setting: the collection's default for a folder (hybrid.YOUR_DOCUMENTS: RRF k = 60, vector leg 0.25,
BM25 k1 = 1.2, b = 0.75, French stop words), --preset answer (hybrid.ANSWER_RETRIEVER, notebook 02's),
then every option given on top, named as `python -m rungs search` names them. Printed: one JSON object,
{"index": PUT <index>, "pipeline": OpenSearch's search pipeline, "search": GET <index>/_search,
"params": its URL parameters, "notes": the traps that bite this setting}.

examples:
  python -m rungs export --engine elasticsearch
  python -m rungs export --engine opensearch --k1 0.9 --b 0.4 --title-weight 3 --k 20 --vector-weight 0.5
  python -m rungs export --engine elasticsearch --vector-weight 0 --match all --shards 4
"""

PRESETS = {"your-documents": hybrid.YOUR_DOCUMENTS, "answer": hybrid.ANSWER_RETRIEVER}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m rungs export", epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                description="Print Elasticsearch or OpenSearch index settings and a search request "
                                            "that rank as a rungs setting does (built with the engine's client).")
    p.add_argument("--engine", choices=ENGINES, default="elasticsearch")
    p.add_argument("--question", default=QUESTION, help="the question the request carries")
    p.add_argument("--preset", choices=sorted(PRESETS), default="your-documents", help="the fusion to start from")
    keyword = p.add_argument_group("keyword knobs")
    keyword.add_argument("--k1", type=float, default=None, help="BM25: how fast repeats stop counting (1.2)")
    keyword.add_argument("--b", type=float, default=None, help="BM25: how much long passages are penalised (0.75)")
    keyword.add_argument("--title-weight", type=float, default=None, help="a title word counts this many times (1)")
    keyword.add_argument("--match", choices=("any", "all"), default=None, help="any word (default) or all")
    keyword.add_argument("--keep-stopwords", action="store_true", help="keep « le », « de »… (dropped by default)")
    keyword.add_argument("--stem", action="store_true", help="the Snowball French stemmer (off by default)")
    fusion = p.add_argument_group("fusion knobs")
    fusion.add_argument("--method", choices=hybrid.METHODS, default=None, help="rrf, convex or lend (as rrf)")
    fusion.add_argument("--k", type=float, default=None, help=f"RRF's constant ({hybrid.YOUR_DOCUMENTS['k']:g}; an engine's is ≥ 1)")
    fusion.add_argument("--keyword-weight", type=float, default=None, help="the keyword leg's weight (1)")
    fusion.add_argument("--vector-weight", type=float, default=None, help=f"the vector leg's weight ({hybrid.YOUR_DOCUMENTS['leg_weights']['vector']:g}; 0: BM25 alone)")
    fusion.add_argument("--window", type=int, default=None, help="how many results each leg brings (100)")
    p.add_argument("--shards", type=int, default=1, help="the index's shards (more than 1: global statistics asked)")
    return p


def setting_from(args) -> Tuned:
    """The setting the options describe: the preset, then each option given on top of it."""
    preset = dict(PRESETS[args.preset])
    keyword = {"match": preset.pop("match")}
    keyword.update({k: v for k, v in (("k1", args.k1), ("b", args.b), ("match", args.match)) if v is not None})
    if args.title_weight is not None:
        keyword["weights"] = {"title": args.title_weight}
    legs = dict(preset.pop("leg_weights"))
    for leg, value in (("keyword", args.keyword_weight), ("vector", args.vector_weight)):
        if value is not None:
            legs[leg] = value
    fusion = {**preset, "leg_weights": legs}
    fusion.update({k: v for k, v in (("method", args.method), ("k", args.k), ("window", args.window)) if v is not None})
    return Tuned.from_knobs(keyword, fusion, stopwords=not args.keep_stopwords, stem=args.stem, shards=args.shards)


def main(argv: list[str] | None = None) -> int:
    """Print the bodies as JSON (exit 0); a setting the engine cannot express: one line saying why (exit 1)."""
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exit_:  # --help (0) or options that do not parse (2): argparse has spoken
        return int(exit_.code or 0)
    try:
        print(dumps(export(setting_from(args), args.question, engine=args.engine)))
    except RungsError as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
