"""What N3 sends, measured without a model (``rungs.lab.sending``): the cut and the count act where they say."""

from rungs import rag
from rungs.lab import sending
from rungs.lab.handbook import load_pages, load_questions

PAGES = {p["id"]: p for p in load_pages()}
Q004 = next(q for q in load_questions() if q["id"] == "q004")   # « Combien de jours de RTT par an au siège ? »
RTT = [PAGES["rtt"], PAGES["heures-supplementaires"]]           # the answering page first, then another


def test_a_short_cut_keeps_the_page_and_loses_the_fact():
    full = sending.what_is_sent(Q004, RTT)
    cut = sending.what_is_sent(Q004, RTT, max_chars=120)   # « 12 jours » begins after the 120th character
    assert full["answering_sent"] and cut["answering_sent"] and full["ids"] == cut["ids"] == ["rtt", "heures-supplementaires"]
    assert full["facts_sent"] and not cut["facts_sent"]
    assert cut["tokens"] < full["tokens"]


def test_one_passage_fewer_drops_the_page_and_the_free_mode_numbers_nothing():
    other_first = sending.what_is_sent(Q004, RTT[::-1], max_passages=1)
    assert other_first["ids"] == ["heures-supplementaires"] and not other_first["answering_sent"]
    free = sending.what_is_sent(Q004, RTT, mode="free")
    assert free["sentences"] is None and free["facts_sent"]
    assert free["tokens"] == rag.build_prompt(Q004["question"], rag.prepare_passages(RTT), mode="free").__len__() // 4


def test_a_sweep_averages_what_each_question_is_sent():
    rows = sending.sweep([Q004], {"q004": RTT}, [{"max_passages": 2, "max_chars": 1500}, {"max_passages": 2, "max_chars": 120}])
    assert [r["facts_sent"] for r in rows] == [1.0, 0.0] and [r["answering_sent"] for r in rows] == [1.0, 1.0]


def test_the_stored_log_holds_one_answer_per_configuration_and_question():
    log = sending.stored_answers()
    assert ("notebook 03", "q004") in log and ("2 passages", "q004") in log
    assert all(key == (r["config"], r["id"]) for key, r in log.items())
