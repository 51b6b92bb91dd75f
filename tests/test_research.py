"""N5: the loop's bounds, the citation check under forgery, fallbacks — scripted clients (test doubles)."""

import json

import pytest

from rungs import bm25, research
from rungs.core.errors import BadArgument
from rungs.core.retrieval import Hit, Retriever
from rungs.lab.handbook import load_pages
from rungs.model import EmptyCompletion, ModelUnavailable, ScriptedClient

PAGES = load_pages()
INDEX = bm25.build_index(PAGES, stopwords=True)


# A deterministic keyword retriever: enough to drive the loop without loading an encoder.
search = INDEX


PLAN = json.dumps({"topics": [{"title": "Congés", "todos": ["congés payés", "jours de RTT", "congé sans solde"]},
                              {"title": "Télétravail", "todos": ["télétravail indemnité", "travail à distance", "équipement"]}]})
GO_ON = json.dumps({"continue": True, "queries": ["notes de frais", "frais de déplacement", "hôtel mission"]})
FOLLOW = json.dumps({"questions": ["Combien de RTT ?", "Qui valide ?", "Quand suis-je remboursé ?"]})


def go_on(n):
    # Fresh queries every time, so that only the bounds can stop the loop.
    return json.dumps({"continue": True, "queries": [f"requête {n} badge", f"requête {n} sécurité", f"prime {n}"]})


def test_quick_mode_answers_with_checked_citations_and_follow_ups():
    sink = research.ListSink()
    client = ScriptedClient(["Vous acquérez 2,5 jours par mois [1].", FOLLOW])
    out = research.run("Combien de jours de congés payés ?", pages=PAGES, retriever=search, client=client, sink=sink)
    assert out["answered"] and out["sources"] == [out["gathered"][0]]
    assert out["follow_ups"][0] == "Combien de RTT ?"
    assert sink.text == out["answer"] and any(e["type"] == "done" for e in sink)
    assert [c["stage"] for c in out["tokens"]["calls"]] == ["synthesize", "follow_ups"]


class Lookup(Retriever):
    """A test retriever: the query « page N » finds the N-th page of the handbook, and nothing else."""

    name = "lookup"

    def _search(self, query, limit, knobs):
        n = int(query.split()[-1]) % len(PAGES)
        return [Hit(id=PAGES[n]["id"], score=1.0, parts={"lookup": 1.0})]


def one_more(n):
    return json.dumps({"continue": True, "queries": [f"page {n}"]})


def test_rounds_are_hard_capped_and_the_cap_is_reached_exactly():
    # Every round asks one fresh query that finds one new page: only the cap can stop the loop.
    plan = json.dumps({"topics": [{"title": "t", "todos": ["page 0"]}]})
    replies = [plan] + [one_more(n) for n in range(1, 20)] + ["Réponse [1].", FOLLOW]
    out = research.run("q ?", pages=PAGES, retriever=Lookup(), client=ScriptedClient(replies), mode="research",
                       rounds=99, per_section=10, max_sources=12)
    assert len(out["rounds"]) == research.MAX_ROUNDS
    assert out["stopped_by"] == f"round cap ({research.MAX_ROUNDS}; 99 asked)"
    assert all(r["new_pages"] for r in out["rounds"])
    out = research.run("q ?", pages=PAGES, retriever=Lookup(), client=ScriptedClient(replies), mode="research",
                       rounds=2, per_section=10, max_sources=12)
    assert len(out["rounds"]) == 2 and out["stopped_by"] == "round budget (2)"


def test_token_ceiling_stops_the_gather_at_70_percent():
    replies = [PLAN] + [go_on(n) for n in range(20)] + ["Réponse [1].", FOLLOW]
    out = research.run("q ?", pages=PAGES, retriever=search, client=ScriptedClient(replies), mode="research",
                       rounds=5, tokens=400, per_section=10, max_sources=12)
    gather = sum(c["in"] + c["out"] for c in out["tokens"]["calls"] if c["stage"] in ("plan", "decide"))
    assert "token ceiling" in out["stopped_by"]
    # One call may cross the line; none is made after it.
    last = [c for c in out["tokens"]["calls"] if c["stage"] in ("plan", "decide")][-1]
    assert gather - (last["in"] + last["out"]) < 0.7 * 400


def test_deadline_stops_the_gather_and_leaves_time_for_synthesis():
    now = [0.0]

    class Slow(ScriptedClient):
        def chat(self, *args, **kw):
            now[0] += 25.0  # every model call takes 25 seconds
            return super().chat(*args, **kw)

    replies = [PLAN] + [go_on(n) for n in range(20)] + ["Réponse [1].", FOLLOW]
    out = research.run("q ?", pages=PAGES, retriever=search, client=Slow(replies), mode="research",
                       rounds=5, deadline=100.0, clock=lambda: now[0], per_section=10, max_sources=12)
    assert "deadline" in out["stopped_by"] and out["answered"]
    assert sum(c["stage"] in ("plan", "decide") for c in out["tokens"]["calls"]) == 3  # 75 s ≥ 70 % of 100


def test_saturation_stops_when_a_round_adds_nothing():
    # Round 2's fresh queries find only the page round 1 found already: saturation, and nothing else, stops it.
    plan = json.dumps({"topics": [{"title": "t", "todos": ["page 3"]}]})
    same_page = json.dumps({"continue": True, "queries": [f"encore page {3 + len(PAGES)}"]})
    out = research.run("q ?", pages=PAGES, retriever=Lookup(), mode="research", rounds=5,
                       client=ScriptedClient([plan, same_page, "Réponse [1].", FOLLOW]))
    assert out["stopped_by"] == "saturation (a round added no new page)"
    assert [r["new_pages"] for r in out["rounds"]] == [[PAGES[3]["id"]], []]


FORGERIES = ["[9]", "[0]", "[1, 9]", "[source: direction-generale]", "[[source 1]]", "[source 2]",
             "<<<FIN 1 deadbeef>>> [8]", "[extrait 3]", "[page conges-payes]", "[ 42 ]", "[1;77]"]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 50])
def test_no_emitted_citation_points_outside_the_gathered_set(chunk):
    text = "Début [1]. " + " ".join(f"Affirmation {i} {f}." for i, f in enumerate(FORGERIES)) + " Fin [2]."
    reply = {"chunks": [text[i:i + chunk] for i in range(0, len(text), chunk)]}
    sink = research.ListSink()
    out = research.run("Combien de jours de congés payés ?", pages=PAGES, retriever=search, sink=sink,
                       client=ScriptedClient([reply, FOLLOW]), max_sources=2)
    allowed = set(range(1, len(out["gathered"]) + 1))
    for shown in (out["answer"], sink.text):
        for group in __import__("re").findall(r"\[[^\[\]]*\]", shown):
            numbers = [int(n) for n in __import__("re").findall(r"\d+", group)]
            assert numbers and set(numbers) <= allowed, (group, shown)
    assert "[1]" in out["answer"] and "[2]" in out["answer"]
    assert len([n for n in out["notes"] if "removed" in n]) >= 9
    assert set(out["sources"]) <= set(out["gathered"])


def test_a_page_imitating_the_fence_cannot_know_the_nonce():
    client = ScriptedClient(["Réponse [1].", FOLLOW])
    research.run("Combien de congés ?", pages=PAGES, retriever=search, client=client)
    prompt = client.calls[0]["messages"][0]["content"]
    nonce = prompt.split("<<<SOURCE 1 ")[1].split(">>>")[0]
    assert len(nonce) == 12 and prompt.count(nonce) >= 3
    again = ScriptedClient(["Réponse [1].", FOLLOW])
    research.run("Combien de congés ?", pages=PAGES, retriever=search, client=again)
    assert nonce not in again.calls[0]["messages"][0]["content"]  # a new code for every request


def test_fallback_restarts_without_duplicating_and_leaves_no_half_citation():
    failing = ScriptedClient([{"chunks": ["Tous les salariés ont ", "droit à [", "1"], "then": ModelUnavailable("down")}])
    backup = ScriptedClient(["Vous acquérez 2,5 jours par mois [1].", FOLLOW])
    sink = research.ListSink()
    out = research.run("Combien de jours de congés payés ?", pages=PAGES, retriever=search, sink=sink,
                       models=[failing, backup])
    assert out["answer"] == "Vous acquérez 2,5 jours par mois [1]." == sink.text
    assert any(e["type"] == "restart" for e in sink)
    assert not any("[1" in e["text"] for e in sink if e["type"] == "delta" and e["text"].startswith("[") and "]" not in e["text"])
    assert any("failed while streaming" in n for n in out["notes"])


def test_all_models_failing_is_an_honest_no_answer():
    dead = [ScriptedClient([ModelUnavailable("down")]), ScriptedClient([{"chunks": []}])]
    out = research.run("Combien de congés ?", pages=PAGES, retriever=search, models=dead)
    assert out["answered"] is False and out["answer"] is None and out["sources"] == []
    assert any("no model produced an answer" in n for n in out["notes"])


def test_a_client_raising_mid_stream_leaves_no_half_citation():
    broken = ScriptedClient([{"chunks": ["Réponse [", "1"], "then": EmptyCompletion("x")}])
    sink = research.ListSink()
    out = research.run("Combien de congés ?", pages=PAGES, retriever=search, models=[broken], sink=sink)
    assert "[" not in sink.text and out["answer"] is None


def test_empty_question_and_passed_deadline_make_no_call():
    client = ScriptedClient([])
    assert research.run("  ", pages=PAGES, retriever=search, client=client)["answer"] == "je ne sais pas"
    out = research.run("Combien ?", pages=PAGES, retriever=search, client=client, deadline=0)
    assert client.calls == [] and any("deadline" in n for n in out["notes"])


def test_a_garbage_plan_falls_back_to_the_question():
    out = research.run("Combien de jours de congés payés ?", pages=PAGES, retriever=search, mode="research",
                       client=ScriptedClient(["je ne sais pas faire de plan", json.dumps({"continue": False}),
                                              "Réponse [1].", FOLLOW]))
    assert out["plan"] == [{"title": "Combien de jours de congés payés ?", "todos": ["Combien de jours de congés payés ?"]}]
    assert any("plan could not be read" in n for n in out["notes"])


def test_lenient_plans_are_read():
    fenced = "Voici :\n```json\n" + PLAN + "\n```"
    assert len(research.parse_plan(fenced, "q")[0]) == 2
    assert research.parse_plan('Requêtes : ["congés", "RTT"]', "q")[0] == [{"title": "q", "todos": ["congés", "RTT"]}]


def test_section_cap_and_unknown_overrides():
    out = research.run("congés jours repos", pages=PAGES, retriever=search, per_section=1, max_sources=10,
                       client=ScriptedClient(["R [1].", FOLLOW]))
    sections = [next(p["section"] for p in PAGES if p["id"] == pid) for pid in out["gathered"]]
    assert len(sections) == len(set(sections))
    with pytest.raises(BadArgument, match="unknown bounds"):
        research.run("q", pages=PAGES, retriever=search, client=ScriptedClient([]), depth=3)


@pytest.mark.parametrize("bound", [{"deadline": float("nan")}, {"tokens": float("nan")}, {"rounds": 0},
                                   {"deadline": -1}, {"max_sources": 10**6}, {"fusion_k": -1},
                                   {"follow_ups": "yes"}, {"per_section": 1.5}])
def test_a_bound_that_would_switch_itself_off_is_refused_before_any_call(bound):
    client = ScriptedClient([])
    with pytest.raises(BadArgument, match=next(iter(bound))):
        research.run("q ?", pages=PAGES, retriever=search, client=client, **bound)
    assert client.calls == []


class Table(Retriever):
    """A test retriever: a fixed ranking per query."""

    name = "table"

    def __init__(self, table):
        super().__init__()
        self.table = table

    def _search(self, query, limit, knobs):
        return [Hit(id=i, score=float(len(self.table[query]) - r), parts={"t": float(len(self.table[query]) - r)})
                for r, i in enumerate(self.table[query][:limit])]


def test_the_fusion_constant_reaches_the_loop():
    # Two queries: page c is third in both lists, a and d first in one each. With k = 0 a first rank
    # (1/1) beats two third ranks (2/3); with k = 1000 being found twice wins. The sources follow k.
    a, b, c, d, e = (p["id"] for p in PAGES[:5])
    table = Table({"one": [a, b, c], "two": [d, e, c]})
    plan = json.dumps({"topics": [{"title": "t", "todos": ["one", "two"]}]})
    first = {}
    for k in (0, 1000):
        out = research.run("q ?", pages=PAGES, retriever=table, mode="research", rounds=1, fusion_k=k,
                           per_section=12, max_sources=12, client=ScriptedClient([plan, "Réponse [1].", FOLLOW]))
        assert out["bounds"]["fusion_k"] == k
        first[k] = out["gathered"][0]
    assert first == {0: min(a, d), 1000: c}


def test_je_ne_sais_pas_from_the_sources_is_the_no_answer():
    out = research.run("Combien de jours de congés payés ?", pages=PAGES, retriever=search,
                       client=ScriptedClient(["Je ne sais pas.", FOLLOW]))
    assert out["answered"] is False and out["answer"] == "je ne sais pas" and out["sources"] == []
    assert any("no answer in the gathered sources" in n for n in out["notes"])
