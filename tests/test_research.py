"""N5: the loop's bounds, the report shown a checked sentence at a time, forgery, fallbacks — scripted clients.

Every reply here is written by hand (``ScriptedClient`` and small doubles, never a model): the contract is
what the loop does with it. Every answer is an ``Answer`` and keeps the answer contract
(``rungs.grounding.contract.check_answer``), and what the reader was shown (``ListSink.text``) is exactly
``Answer.text``.
"""

import json
import re

import pytest

from rungs.research import checks
from rungs import bm25, research
from rungs.core.errors import BadArgument
from rungs.core.retrieval import Hit, Retriever
from rungs.grounding import Answer, AnswerUnavailable, Status, claims
from rungs.grounding.contract import check_answer
from rungs.lab.handbook import load_pages
from rungs.model import ChatResult, EmptyCompletion, ModelUnavailable, ScriptedClient

PAGES = load_pages()
# A deterministic keyword retriever: enough to drive the loop without loading an encoder.
search = bm25.build_index(PAGES, stopwords=True)
LEAVE = "Combien de jours de congés payés ?"  # source 1 is conges-payes: « 2,5 jours ouvrables … par mois »

PLAN = json.dumps({"topics": [{"title": "Congés", "todos": ["congés payés", "jours de RTT", "congé sans solde"]},
                              {"title": "Télétravail", "todos": ["télétravail indemnité", "travail à distance", "équipement"]}]})
FOLLOW = json.dumps({"questions": ["Combien de RTT ?", "Qui valide ?", "Quand suis-je remboursé ?"]})


def ask(question=LEAVE, replies=(), **kw) -> tuple[Answer, research.ListSink]:
    """One run with a sink; every answer keeps the contract, and the reader saw exactly its text."""
    sink = research.ListSink()
    kw.setdefault("retriever", search)
    if "models" not in kw:
        kw.setdefault("client", ScriptedClient(list(replies)))
    out = research.run(question, pages=kw.pop("pages", PAGES), sink=sink, **kw)
    assert isinstance(out, Answer)
    check_answer(out)
    assert sink.text == out.text, (sink.text, out.text)
    return out, sink


def go_on(n):
    # Fresh queries every time, so that only the bounds can stop the loop.
    return json.dumps({"continue": True, "queries": [f"requête {n} badge", f"requête {n} sécurité", f"prime {n}"]})


def test_quick_mode_answers_with_checked_citations_and_follow_ups():
    out, sink = ask(replies=["Vous acquérez 2,5 jours par mois [1].", FOLLOW])
    assert out.status is Status.ANSWERED and out.by == "research quick"
    assert out.cited == (out.trace["gathered"][0],) == ("conges-payes",)
    assert list(out.sent) == out.trace["gathered"] and out.trace["numbered"][1] == "conges-payes"
    assert out.trace["follow_ups"][0] == "Combien de RTT ?" and any(e["type"] == "done" for e in sink)
    assert [c["stage"] for c in out.trace["calls"]] == ["synthesize", "follow_ups"]
    assert out.cost.calls == 2 and out.cost.prompt_tokens > 0 and out.cost.output_tokens > 0
    assert [(f.figure, f.held_by) for f in out.figures] == [("2,5 jours", ("conges-payes",))]


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
    out, _ = ask("q ?", replies, retriever=Lookup(), mode="research", rounds=99, per_section=10, max_sources=12)
    assert len(out.trace["rounds"]) == research.MAX_ROUNDS
    assert out.trace["stopped_by"] == f"round cap ({research.MAX_ROUNDS}; 99 asked)"
    assert all(r["new_pages"] for r in out.trace["rounds"])
    out, _ = ask("q ?", replies, retriever=Lookup(), mode="research", rounds=2, per_section=10, max_sources=12)
    assert len(out.trace["rounds"]) == 2 and out.trace["stopped_by"] == "round budget (2)"


def test_token_ceiling_stops_the_gather_at_70_percent():
    replies = [PLAN] + [go_on(n) for n in range(20)] + ["Réponse [1].", FOLLOW]
    out, _ = ask("q ?", replies, mode="research", rounds=5, tokens=400, per_section=10, max_sources=12)
    gathering = [c for c in out.trace["calls"] if c["stage"] in ("plan", "decide")]
    assert "token ceiling" in out.trace["stopped_by"]
    # One call may cross the line; none is made after it.
    spent = sum(c["in"] + c["out"] for c in gathering)
    assert spent - (gathering[-1]["in"] + gathering[-1]["out"]) < 0.7 * 400 <= spent


def test_deadline_stops_the_gather_and_leaves_time_for_synthesis():
    now = [0.0]

    class Slow(ScriptedClient):
        def chat(self, *args, **kw):
            now[0] += 25.0  # every model call takes 25 seconds
            return super().chat(*args, **kw)

    replies = [PLAN, go_on(0), go_on(1), "Réponse [1].", FOLLOW]  # the gather stops after three calls
    out, _ = ask("q ?", client=Slow(replies), mode="research", rounds=5, deadline=100.0, clock=lambda: now[0],
                 per_section=10, max_sources=12)
    assert "deadline" in out.trace["stopped_by"] and out.status is Status.ANSWERED
    assert sum(c["stage"] in ("plan", "decide") for c in out.trace["calls"]) == 3  # 75 s ≥ 70 % of 100


def test_saturation_stops_when_a_round_adds_nothing():
    # Round 2's fresh queries find only the page round 1 found already: saturation, and nothing else, stops it.
    plan = json.dumps({"topics": [{"title": "t", "todos": ["page 3"]}]})
    same_page = json.dumps({"continue": True, "queries": [f"encore page {3 + len(PAGES)}"]})
    out, _ = ask("q ?", [plan, same_page, "Réponse [1].", FOLLOW], retriever=Lookup(), mode="research", rounds=5)
    assert out.trace["stopped_by"] == "saturation (a round added no new page)"
    assert [r["new_pages"] for r in out.trace["rounds"]] == [[PAGES[3]["id"]], []]


FORGERIES = ["[9]", "[0]", "[1, 9]", "[source: direction-generale]", "[[source 1]]", "[source 2]",
             "<<<FIN 1 deadbeef>>> [8]", "[extrait 3]", "[page conges-payes]", "[ 42 ]", "[1;77]", "^9", "⁷"]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 50])
def test_no_shown_citation_points_outside_the_gathered_set(chunk):
    text = "Début [1]. " + " ".join(f"Affirmation {i} {f}." for i, f in enumerate(FORGERIES)) + " Fin [2]."
    reply = {"chunks": [text[i:i + chunk] for i in range(0, len(text), chunk)]}
    out, sink = ask(replies=[reply, FOLLOW], max_sources=2)
    for group in re.findall(r"\[[^\[\]]*\]", sink.text):
        assert set(map(int, re.findall(r"\d+", group))) <= {1, 2}, (group, sink.text)
    assert "^" not in sink.text and "⁷" not in sink.text and "<<<" not in sink.text
    # Each forged sentence is withheld (it cites nothing gathered, or echoes a fence); « [1, 9] » and « [1;77] »
    # keep nothing of theirs either: a citation is kept whole or removed whole.
    assert sink.text == "Début [1]. Fin [2]."
    assert len([n for n in out.notes if "removed" in n]) >= 11
    assert len(out.trace["withheld"]) == len(FORGERIES) and set(out.cited) <= set(out.sent)


def test_a_citation_written_as_an_exponent_is_read_kept_when_gathered_and_removed_when_not():
    """Finding C9: « illimités^9 », a citation of a source never gathered, reached the reader."""
    out, sink = ask(replies=["Les congés sont illimités^9. Chaque salarié acquiert 2,5 jours par mois⁽¹⁾. "
                             "Les jours acquis se prennent dès le mois suivant^1. Sans limite⁷."], follow_ups=False)
    assert sink.text == ("Chaque salarié acquiert 2,5 jours par mois [1]. "
                         "Les jours acquis se prennent dès le mois suivant [1].")
    assert any("'^9' removed" in n for n in out.notes) and any("'⁷' removed" in n for n in out.notes)
    assert [w["text"] for w in out.trace["withheld"]] == ["Les congés sont illimités.", "Sans limite."]
    history = [p for p in PAGES if p["id"] == "histoire"]
    shown, _ = ask("Quelle surface avait le premier entrepôt ?", ["Le premier entrepôt faisait 1 200 m² [1]."],
                   follow_ups=False, pages=history, retriever=bm25.build_index(history))
    assert shown.text == "Le premier entrepôt faisait 1 200 m² [1]."  # an area is no citation


def test_the_notebooks_fence_echo_never_reaches_the_reader():
    """Notebook 05's committed live answer: source 2 copied whole, its fence lines included, cited [1]."""
    class Echo(ScriptedClient):
        def stream(self, messages, **kw):
            prompt = messages[0]["content"]
            nonce = re.search(r"<<<SOURCE 1 ([0-9a-f]+)>>>", prompt).group(1)
            self.replies.insert(0, f"[1] >>>SOURCE 2 {nonce}<<<\nChaque salarié acquiert 2,5 jours ouvrables de "
                                   f"congés payés par mois.\n<<<FIN 2 {nonce}>>>\n\nEt le reste [1].")
            return super().stream(messages, **kw)

    out, sink = ask(client=Echo([]), follow_ups=False)
    nonce = out.trace["fences"][-1]
    assert len(nonce) == 12 and nonce in out.trace["prompt"] and set(out.trace["fences"]) >= {"<<<", ">>>"}
    assert nonce not in sink.text and ">>>" not in sink.text and "<<<" not in sink.text
    assert out.text == "Et le reste [1]." and out.status is Status.ANSWERED
    assert any("echoes the prompt's fence" in n for n in out.notes)
    only_echo, sink = ask(client=Echo([]), follow_ups=False, max_sources=1)
    # Whatever else is said, the echo alone is never an answer: with one source, « [1] … » cites it, still withheld.
    assert nonce not in sink.text and all(m not in only_echo.text for m in only_echo.trace["fences"])


def test_a_sentence_reaches_the_reader_only_once_complete_and_checked():
    # The sink is read at every piece the model writes: nothing of a sentence shows before the next one begins.
    seen = []
    first = "Vous acquérez 2,5 jours par mois [1]."
    text = first + " Soit 40 jours par an [1]. Les jours se posent dans l’outil RH [1]."

    class Watched(ScriptedClient):
        def stream(self, messages, **kw):
            for piece in super().stream(messages, **kw):
                seen.append(sink.text)
                yield piece

    sink = research.ListSink()
    out = research.run(LEAVE, pages=PAGES, retriever=search, client=Watched([text]), follow_ups=False, sink=sink)
    check_answer(out)
    # The first sentence shows while the model still writes, whole; « 40 jours par an » is on no page it cites
    # (the page says 30): that sentence is never shown, not even in part.
    assert set(seen) == {"", first} and seen.index(first) > text.index("Soit") // 7
    assert out.text == sink.text == first + " Les jours se posent dans l’outil RH [1]." and not out.unsupported
    assert out.trace["withheld"] == [{"text": "Soit 40 jours par an [1].",
                                      "reason": "the figure « 40 jours » is in no source it cites"}]
    assert "sentence withheld: « Soit 40 jours par an [1]. » — the figure « 40 jours » is in no source it cites" \
        in out.notes
    assert [e["type"] for e in sink if e["type"] in ("withheld", "delta")] == ["delta", "withheld", "delta"]


def test_a_paragraphs_citation_covers_its_next_sentences_and_a_trailing_one_its_own():
    # The model writes « [1] Un paragraphe. Suite. » and « Une phrase. [1] »: both are the sentence's sources.
    report = ("[1] Chaque salarié acquiert 2,5 jours par mois. Soit 30 jours ouvrables par an.\n\n"
              "Les jours non pris sont perdus au 31 mai. [1]\n\nSoit 30 jours sans rien citer.")
    out, _ = ask(replies=[report], follow_ups=False)
    assert out.text == ("[1] Chaque salarié acquiert 2,5 jours par mois. Soit 30 jours ouvrables par an.\n\n"
                        "Les jours non pris sont perdus au 31 mai. [1]")
    assert out.trace["withheld"] == [{"text": "Soit 30 jours sans rien citer.",
                                      "reason": "it cites none of the gathered sources"}]
    assert [q.source for q in out.quotes] == ["conges-payes", "conges-payes"]
    assert all(claims.found(q.text, out.sent[q.source]) for q in out.quotes)


def test_the_report_carries_a_quote_per_citation_and_never_shows_an_unsupported_figure():
    # Moved from test_claims (where the figure was « marked » after the fact); now it is never shown.
    rtt = {"id": "rtt", "title": "Jours de RTT",
           "body": "Au siège, les salariés travaillent 37 heures par semaine : elles sont compensées par 12 jours "
                   "de RTT par an. Six jours sont fixés par l’entreprise, six sont posés librement."}
    night = {"id": "nuit", "title": "Travail de nuit", "body": "L’équipe de nuit travaille entre 21 h et 6 h, à Corbas."}
    pages = [rtt, night, {"id": "autre", "title": "Autre", "body": "Rien à voir."}]
    out, sink = ask("Combien de RTT ?", ["Vous avez 12 jours de RTT par an [1]. La pause dure 45 minutes [1]."],
                    pages=pages, retriever=bm25.build_index(pages, stopwords=True), follow_ups=False)
    assert out.status is Status.ANSWERED and out.cited == ("rtt",) and out.text == "Vous avez 12 jours de RTT par an [1]."
    assert out.quotes[0].source == "rtt" and "12 jours de RTT" in out.quotes[0].text
    assert claims.found(out.quotes[0].text, rtt["body"]) and out.quotes[0].claim == "Vous avez 12 jours de RTT par an."
    assert "45 minutes" not in sink.text and not out.unsupported
    assert "sentence withheld: « La pause dure 45 minutes [1]. » — the figure « 45 minutes » is in no source it cites" \
        in out.notes
    assert [e for e in sink if e["type"] == "checked"][0]["quotes"][0]["n"] == 1


def test_a_report_cut_by_its_token_budget_says_so_and_hides_its_unfinished_sentence():
    """Finding (notebook 05 cell 38): the report stopped mid-sentence at exactly 400 tokens, with no note."""
    head = "Vous acquérez 2,5 jours par mois [1]. "
    cut = head * 41 + "Un taxi est remboursé la nuit entre 22 h et"
    assert len(cut) // 4 == research.STAGE_TOKENS["synthesis"]  # ScriptedClient counts 4 characters a token
    out, sink = ask(replies=[cut], follow_ups=False)
    assert out.trace["calls"][0]["out"] == research.STAGE_TOKENS["synthesis"]
    assert any("cut by its token budget (400 tokens" in n for n in out.notes)
    assert sink.text.endswith("par mois [1].") and "taxi" not in sink.text
    assert out.trace["withheld"][-1]["reason"].startswith("unfinished: the report was cut by its token budget")
    whole, _ = ask(replies=[head + "Un taxi est remboursé la nuit [1]"], follow_ups=False)  # not cut: shown whole
    assert whole.text.endswith("la nuit [1]") and not any("cut" in n for n in whole.notes)


class Miscounts(ScriptedClient):
    """A client of one's own that reports token counts that are not counts, after streaming (or in a chat)."""

    def __init__(self, replies, counts):
        super().__init__(replies)
        self.counts = counts

    def stream(self, messages, **kw):
        yield from super().stream(messages, **kw)
        self.last_usage = self.counts

    def chat(self, messages, **kw):
        out = super().chat(messages, **kw)
        return ChatResult(**{**out.__dict__, "input_tokens": self.counts[0], "output_tokens": self.counts[1]})


@pytest.mark.parametrize("counts", [("abc", 3), (float("nan"), 3), (None, None), (12, -1), "abc"])
def test_a_client_that_miscounts_is_named_and_never_raises_after_the_answer_streamed(counts):
    """Finding A18: token counts « abc », NaN or None made research.run raise after the answer streamed."""
    two = "Vous acquérez 2,5 jours par mois [1]. Les jours se posent dans l’outil RH [1]."
    out, sink = ask(client=Miscounts([two], counts), follow_ups=False)
    assert out.status is Status.UNAVAILABLE and out.text == "" == sink.text
    assert any(e["type"] == "withdrawn" for e in sink)  # the reader was told that what streamed is not the answer
    assert any("failed while streaming (BadResponse" in n for n in out.notes)
    assert out.cost.calls == 1 and out.cost.prompt_tokens == 0  # the call counted; its tokens unknown, not guessed
    backup = ScriptedClient(["Vous acquérez 2,5 jours par mois [1]."])
    out, sink = ask(models=[Miscounts(["Autre [1]."], counts), backup], follow_ups=False)
    assert out.text == "Vous acquérez 2,5 jours par mois [1]." and any(e["type"] == "restart" for e in sink)


def test_a_follow_up_call_that_miscounts_is_a_note_and_the_answer_stays():
    class LateMiscount(Miscounts):
        def stream(self, messages, **kw):
            yield from ScriptedClient.stream(self, messages, **kw)

    out, _ = ask(client=LateMiscount(["Vous acquérez 2,5 jours par mois [1].", FOLLOW], ("abc", 1)))
    assert out.status is Status.ANSWERED and out.trace["follow_ups"] == []
    assert any(n.startswith("follow_ups: scripted (teaching prop) failed (BadResponse: ") and "input_tokens" in n
               for n in out.notes)
    assert out.trace["calls"][-1] == {"stage": "follow_ups", "in": 0, "out": 0, "model": "scripted (teaching prop)",
                                      "seconds": out.trace["calls"][-1]["seconds"], "failed": True}


def test_a_page_imitating_the_fence_cannot_know_the_nonce():
    client = ScriptedClient(["Réponse [1].", FOLLOW])
    research.run("Combien de congés ?", pages=PAGES, retriever=search, client=client)
    prompt = client.calls[0]["messages"][0]["content"]
    nonce = prompt.split("<<<SOURCE 1 ")[1].split(">>>")[0]
    assert len(nonce) == 12 and prompt.count(nonce) >= 3
    # The code is a hash of the request with its code left out: the same request, the same code (a run is
    # repeatable); another request, another code; no page can hold the hash of a prompt that holds the page.
    assert nonce == checks.fence_code(prompt.replace(nonce, ""))
    again = ScriptedClient(["Réponse [1].", FOLLOW])
    research.run("Combien de congés ?", pages=PAGES, retriever=search, client=again)
    assert again.calls[0]["messages"][0]["content"] == prompt
    other = ScriptedClient(["Réponse [1].", FOLLOW])
    research.run("Combien de jours de congés ?", pages=PAGES, retriever=search, client=other)
    assert nonce not in other.calls[0]["messages"][0]["content"]


def test_fallback_restarts_without_duplicating_and_leaves_no_half_citation():
    failing = ScriptedClient([{"chunks": ["Tous les salariés ont ", "droit à [", "1"], "then": ModelUnavailable("down")}])
    backup = ScriptedClient(["Vous acquérez 2,5 jours par mois [1].", FOLLOW])
    out, sink = ask(models=[failing, backup])
    assert out.text == "Vous acquérez 2,5 jours par mois [1]." == sink.text
    assert any(e["type"] == "restart" for e in sink)
    assert not any("[1" in e["text"] and "]" not in e["text"] for e in sink if e["type"] == "delta")
    assert any("failed while streaming" in n for n in out.notes)
    # The follow-ups ask the chain again from its first model (its script is spent: a failed call, counted).
    assert [c["stage"] for c in out.trace["calls"]] == ["synthesize", "synthesize", "follow_ups", "follow_ups"]
    assert out.cost.calls == 4 and out.trace["calls"][0]["failed"] and out.trace["calls"][2]["failed"]


def test_all_models_failing_is_an_honest_unavailable():
    dead = [ScriptedClient([ModelUnavailable("down")]), ScriptedClient([{"chunks": []}])]
    out, _ = ask("Combien de congés ?", models=dead)
    assert out.status is Status.UNAVAILABLE and out.text == "" and out.cited == ()
    assert any("no model produced an answer" in n for n in out.notes) and "no model wrote a usable report" in out.reason
    with pytest.raises(AnswerUnavailable, match="no model wrote"):
        out.raise_for_status()


def test_a_client_raising_mid_stream_leaves_no_half_citation():
    broken = ScriptedClient([{"chunks": ["Réponse [", "1"], "then": EmptyCompletion("x")}])
    out, sink = ask("Combien de congés ?", models=[broken])
    assert "[" not in sink.text and out.status is Status.UNAVAILABLE


def test_empty_question_and_passed_deadline_make_no_call():
    client = ScriptedClient([])
    out, sink = ask("  ", client=client)
    assert out.status is Status.NO_ANSWER and out.text == "je ne sais pas" and out.cost.calls == 0
    out, _ = ask("Combien ?", client=client, deadline=0)
    assert client.calls == [] and out.status is Status.UNAVAILABLE and "deadline" in out.reason
    assert out.trace["stopped_by"] == "deadline"


def test_a_garbage_plan_falls_back_to_the_question():
    out, _ = ask(mode="research", replies=["je ne sais pas faire de plan", json.dumps({"continue": False}),
                                           "Réponse [1].", FOLLOW])
    assert out.trace["plan"] == [{"title": LEAVE, "todos": [LEAVE]}]
    assert any("plan could not be read" in n for n in out.notes)


def test_lenient_plans_are_read():
    fenced = "Voici :\n```json\n" + PLAN + "\n```"
    assert len(research.parse_plan(fenced, "q")[0]) == 2
    assert research.parse_plan('Requêtes : ["congés", "RTT"]', "q")[0] == [{"title": "q", "todos": ["congés", "RTT"]}]


def test_section_cap_and_unknown_overrides():
    out, _ = ask("congés jours repos", ["R [1].", FOLLOW], per_section=1, max_sources=10)
    sections = [next(p["section"] for p in PAGES if p["id"] == pid) for pid in out.trace["gathered"]]
    assert len(sections) == len(set(sections))
    with pytest.raises(BadArgument, match="unknown bounds"):
        research.run("q", pages=PAGES, retriever=search, client=ScriptedClient([]), depth=3)


@pytest.mark.parametrize("bound", [{"deadline": float("nan")}, {"tokens": float("nan")}, {"rounds": 0},
                                   {"deadline": -1}, {"max_sources": 10**6}, {"fusion_k": -1},
                                   {"follow_ups": "yes"}, {"per_section": 1.5}, {"prompt": "no fields"},
                                   {"prompt": "{nonce}{sources}{question}{extra}"}])
def test_a_bound_that_would_switch_itself_off_is_refused_before_any_call(bound):
    client = ScriptedClient([])
    with pytest.raises(BadArgument, match=next(iter(bound))):
        research.run("q ?", pages=PAGES, retriever=search, client=client, **bound)
    with pytest.raises(BadArgument, match=next(iter(bound))):
        research.Researcher(PAGES, client, retriever=search, **bound)
    assert client.calls == []


def test_the_synthesis_prompt_is_a_knob_that_reaches_the_loop():
    """Finding: notebook 05 §6 swapped ``research.SYNTH_PROMPT``, which the loop never read: both runs were one."""
    client = ScriptedClient(["Réponse [1]."])
    ask(client=client, follow_ups=False, prompt="Sources {nonce} :\n{sources}\nQuestion : {question}")
    assert client.calls[0]["messages"][0]["content"].startswith("Sources ")


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
        out, _ = ask("q ?", [plan, "Réponse [1].", FOLLOW], retriever=table, mode="research", rounds=1, fusion_k=k,
                     per_section=12, max_sources=12)
        assert out.trace["bounds"]["fusion_k"] == k
        first[k] = out.trace["gathered"][0]
    assert first == {0: min(a, d), 1000: c}


def test_je_ne_sais_pas_from_the_sources_is_the_no_answer():
    out, sink = ask(replies=["Je ne sais pas [2].", FOLLOW])
    assert out.status is Status.NO_ANSWER and out.text == "je ne sais pas" == sink.text and out.cited == ()
    assert any("no answer in the gathered sources" in n for n in out.notes)


def test_the_researcher_is_built_once_and_answers_in_the_one_shape():
    built = []

    class Counting(Lookup):
        def __init__(self):
            super().__init__()
            built.append(self)

    client = ScriptedClient(["Réponse [1].", "Autre réponse [1]."])
    asker = research.Researcher(PAGES, client, retriever=Counting(), follow_ups=False)
    first, second = asker.ask("page 3"), asker.ask("page 4")
    assert len(built) == 1 and asker.name == "research quick"
    assert first.cited == (PAGES[3]["id"],) and second.cited == (PAGES[4]["id"],) and second.text == "Autre réponse [1]."
    with pytest.raises(BadArgument, match="question"):
        asker.ask("x" * 1001)


@pytest.mark.parametrize("unit", ["a. ", "Phrase [1]. ", "[1] ", "x", "Vu ^9. ", "(source 1). "])
def test_the_sentence_gate_stays_linear_however_the_report_is_written(unit):
    # The splitter runs on what is held only — at most one sentence (MAX_SENTENCE_CHARS) and the next one's
    # start —, so a report that never ends a sentence, or ends one every few characters, costs the same per piece.
    from doubles import growth

    def stream(text):
        gate = research.SentenceGate({1: "p"}, {"p": "Phrase."}, "q ?", ("<<<", ">>>"), lambda t: None)
        for i in range(0, len(text), 7):
            gate.feed(text[i:i + 7])
        gate.finish()

    n = 12_000 // len(unit)  # well past the cap on what is held, on both sides
    assert growth(stream, unit * n, unit * 4 * n, repeat=3) < 8


@pytest.mark.parametrize("written, shown, cited", [
    ("Les congés sont illimités<sup>9</sup>.", "Les congés sont illimités.", []),
    ("Un droit<SUP> 1, 9 </SUP>.", "Un droit.", []),
    ("Deux jours<sup>1, 2</sup>.", "Deux jours [1, 2].", [1, 2])])
def test_a_citation_written_as_html_superscript_is_read_as_one(written, shown, cited):
    # Probe of issue 43: « illimités<sup>9</sup> » for a source never gathered was kept — a notebook's Markdown
    # shows it as « illimités⁹ », a citation of nothing.
    assert research.check_citations(written, {1, 2})[:2] == (shown, cited)


def test_quotes_name_a_numbered_page_whose_text_was_not_handed_in():
    # Probe of issue 43: checks.quotes("… [1].", {1: "a"}, {}) raised a bare KeyError 'a'.
    with pytest.raises(BadArgument, match="no text for page 'a' \\(source \\[1\\]\\)"):
        checks.quotes("Deux jours [1].", {1: "a"}, {})
