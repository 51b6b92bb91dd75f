"""python -m rungs export: JSON that parses, bodies built by the clients' own builders and accepted by the clients;
the knobs carried over; the traps refused or stated where they bite."""

import json

import pytest

from rungs import __main__ as entry
from rungs import hybrid
from rungs.core.errors import BadArgument
from rungs.tools import export

QUESTION = "combien de jours de congés payés par an ?"
TUNED = export.Tuned.from_knobs({"k1": 0.9, "b": 0.4, "weights": {"title": 3.0}},
                                {"k": 20, "window": 50, "leg_weights": {"keyword": 1.0, "vector": 0.5}})


def run(capsys, *argv):
    code = entry.main(["export", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("engine", export.ENGINES)
def test_the_output_parses_as_json_and_carries_the_knobs(engine, capsys):
    code, out, _ = run(capsys, "--engine", engine, "--k1", "0.9", "--b", "0.4", "--title-weight", "3", "--k", "20",
                       "--window", "50", "--vector-weight", "0.5")
    assert code == 0
    bodies = json.loads(out)
    assert bodies["index"]["settings"]["similarity"]["rungs_bm25"] == {"type": "BM25", "k1": 0.9, "b": 0.4}
    assert bodies["index"]["mappings"]["properties"]["title"]["similarity"] == "rungs_bm25"
    text = json.dumps(bodies["search"], ensure_ascii=False)
    assert '"title^3"' in text and QUESTION in text
    if engine == "elasticsearch":
        rrf = bodies["search"]["retriever"]["rrf"]
        assert rrf["rank_constant"] == 20 and rrf["rank_window_size"] == 50
        assert [c["weight"] for c in rrf["retrievers"]] == [1.0, 0.5]
    else:
        combination = bodies["pipeline"]["phase_results_processors"][0]["score-ranker-processor"]["combination"]
        assert combination["rank_constant"] == 20 and combination["technique"] == "rrf"
        assert combination["parameters"]["weights"] == pytest.approx([2 / 3, 1 / 3])  # OpenSearch: a sum of 1
        assert bodies["search"]["query"]["hybrid"]["pagination_depth"] == 50
        assert bodies["params"]["search_pipeline"] == "rungs-hybrid"


def test_the_default_is_the_collections_setting_for_a_folder(capsys):
    bodies = json.loads(run(capsys)[1])
    rrf = bodies["search"]["retriever"]["rrf"]
    assert rrf["rank_constant"] == hybrid.YOUR_DOCUMENTS["k"]
    assert [c["weight"] for c in rrf["retrievers"]] == list(hybrid.YOUR_DOCUMENTS["leg_weights"].values())
    assert bodies["index"]["settings"]["similarity"]["rungs_bm25"] == {"type": "BM25", "k1": 1.2, "b": 0.75}
    answer = json.loads(run(capsys, "--preset", "answer")[1])["search"]["retriever"]["rrf"]
    assert answer["rank_constant"] == hybrid.ANSWER_RETRIEVER["k"]


def test_lend_is_exported_as_the_rrf_it_starts_from_and_says_the_lending_is_yours(capsys):
    code, out, _ = run(capsys, "--method", "lend", "--k", "5", "--vector-weight", "1")
    assert code == 0
    bodies = json.loads(out)
    rrf = bodies["search"]["retriever"]["rrf"]
    assert rrf["rank_constant"] == 5 and [c["weight"] for c in rrf["retrievers"]] == [1.0, 1.0]
    assert any("method='lend' is exported as RRF" in note for note in bodies["notes"])


def test_the_keyword_query_and_the_index_are_the_clients_own_builder_output():
    from elasticsearch.dsl import Q
    from opensearchpy.helpers.query import Query

    bodies = export.elasticsearch(TUNED, QUESTION)
    child = bodies["search"]["retriever"]["rrf"]["retrievers"][0]["retriever"]["standard"]["query"]
    assert child == Q("combined_fields", query=QUESTION, fields=["title^3", "body"], operator="or").to_dict()
    export.opensearch(TUNED, QUESTION)
    assert {"combined_fields", "hybrid", "knn"} <= set(Query._classes)  # registered as the client's own queries


def test_the_elasticsearch_client_accepts_and_sends_the_bodies():
    from elasticsearch import Elasticsearch

    sent = []
    client = Elasticsearch("http://127.0.0.1:9")  # never contacted: the request is caught below
    client.perform_request = lambda method, path, **kw: sent.append((method, path, kw.get("body")))
    bodies = export.elasticsearch(TUNED, QUESTION)
    client.indices.create(index="docs", **bodies["index"])
    client.search(index="docs", **bodies["search"])  # every key of the body is an argument of the client's search
    assert sent[0][0] == "PUT" and sent[0][2]["settings"]["similarity"]
    assert sent[1][1] == "/docs/_search" and sent[1][2]["retriever"] == bodies["search"]["retriever"]


def test_the_opensearch_client_accepts_and_sends_the_bodies():
    from opensearchpy import OpenSearch

    sent = []
    client = OpenSearch(hosts=[{"host": "127.0.0.1", "port": 9}])
    client.transport.perform_request = lambda method, url, **kw: sent.append((method, url, kw))
    bodies = export.opensearch(TUNED, QUESTION)
    client.indices.create(index="docs", body=bodies["index"])
    client.search_pipeline.put(id="rungs-hybrid", body=bodies["pipeline"])
    client.search(index="docs", body=bodies["search"], params=bodies["params"])
    assert [s[1] for s in sent] == ["/docs", "/_search/pipeline/rungs-hybrid", "/docs/_search"]
    assert sent[2][2]["params"]["search_pipeline"] == "rungs-hybrid"


@pytest.mark.parametrize("k", ["0", "0.5", "2.5"])
@pytest.mark.parametrize("engine", export.ENGINES)
def test_an_rrf_k_the_engines_cannot_take_is_refused_in_one_line(engine, k, capsys):
    code, out, err = run(capsys, "--engine", engine, "--k", k)
    assert code == 1 and out == "" and "NoEquivalent" in err and "rank_constant" in err
    assert "Traceback" not in err


def test_a_field_weight_below_one_and_fts5_idf_are_refused():
    with pytest.raises(export.NoEquivalent, match="at least 1"):
        export.elasticsearch(export.Tuned(weights={"title": 2.0, "body": 0.5}), QUESTION)
    with pytest.raises(export.NoEquivalent, match="scripted similarity"):
        export.Tuned.from_knobs({"idf": "fts5"})


def test_the_traps_are_stated_where_they_bite():
    notes = " ".join(export.elasticsearch(TUNED, QUESTION)["notes"])
    assert "k = 21" in notes  # Qdrant counts ranks from 0: its k is ours plus 1
    assert "Weaviate's alpha" in notes and "not an RRF weight" in notes
    assert "OpenSearch's weights must add up to 1" in " ".join(export.opensearch(TUNED, QUESTION)["notes"])
    four = export.elasticsearch(export.Tuned(shards=4), QUESTION)
    assert four["params"] == {"search_type": "dfs_query_then_fetch"} and "own idf" in " ".join(four["notes"])
    assert export.elasticsearch(export.Tuned(), QUESTION)["params"] == {}


def test_convex_fusion_is_the_linear_retriever_and_the_normalization_processor():
    convex = export.Tuned.from_knobs(fusion={"method": "convex", "leg_weights": {"keyword": 3, "vector": 1}})
    linear = export.elasticsearch(convex, QUESTION)["search"]["retriever"]["linear"]
    assert [(c["weight"], c["normalizer"]) for c in linear["retrievers"]] == [(3.0, "minmax"), (1.0, "minmax")]
    processor = export.opensearch(convex, QUESTION)["pipeline"]["phase_results_processors"][0]
    assert processor["normalization-processor"]["combination"]["parameters"]["weights"] == [0.75, 0.25]
    assert "alpha = 0.25" in " ".join(export.elasticsearch(convex, QUESTION)["notes"])


def test_keywords_alone_need_no_fusion_and_all_words_become_and():
    alone = export.Tuned.from_knobs({"match": "all"}, {"leg_weights": {"keyword": 1.0, "vector": 0.0}})
    bodies = export.elasticsearch(alone, QUESTION)
    assert "retriever" not in bodies["search"]
    assert bodies["search"]["query"]["combined_fields"]["operator"] == "and"
    assert export.opensearch(alone, QUESTION)["pipeline"] is None


def test_the_analyzer_follows_the_tokenizer_options():
    plain = export.analysis_chain(export.Tuned(stopwords=False))
    assert [name for name, _, _ in plain] == ["lowercase", "asciifolding"]
    stops = export.analysis_chain(export.Tuned(stopwords=True))
    assert stops[-1][0] == "rungs_stop" and "etre" in stops[-1][2]["stopwords"]  # folded, as rungs folds
    stemmed = [name for name, _, _ in export.analysis_chain(export.Tuned(stopwords=True, stem=True))]
    assert stemmed.index("rungs_stemmer") < stemmed.index("asciifolding")  # Snowball needs the accents


@pytest.mark.parametrize("bad", [{"k1": float("nan")}, {"window": 0}, {"legs": {"bm25": 1.0}},
                                 {"weights": {}}, {"stem": "yes"}, {"method": "sum"}])
def test_bad_settings_are_named(bad):
    with pytest.raises(BadArgument):
        export.export(export.Tuned(**bad), QUESTION)
    with pytest.raises(BadArgument):
        export.export(export.Tuned(), QUESTION, engine="solr")
    with pytest.raises(BadArgument, match="fusion knobs"):
        export.Tuned.from_knobs(fusion={"rrf_k": 20})


def test_the_command_is_listed_and_its_help_prints(capsys):
    assert "export" in entry.COMMANDS
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "--engine" in out and "--vector-weight" in out
