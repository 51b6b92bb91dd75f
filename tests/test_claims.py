"""Claims checked by code: quotes found word for word, figures read one way, N3's three modes with scripted replies.

Every reply here is written by hand (``ScriptedClient``, a test double): the contract is what the code
does with it — the repair round trip, each refusal, what the pointing mode copies.
"""

import json

import pytest

from rungs import rag, research
from rungs.core import claims, figures
from rungs.core.errors import BadArgument
from rungs.model import ScriptedClient

RTT = {"id": "rtt", "title": "Jours de RTT",
       "body": "Au siège, les salariés travaillent 37 heures par semaine : elles sont compensées par 12 jours de RTT "
               "par an. Six jours sont fixés par l’entreprise, six sont posés librement."}
NIGHT = {"id": "nuit", "title": "Travail de nuit", "body": "L’équipe de nuit travaille entre 21 h et 6 h, à Corbas."}
SENT = [RTT, NIGHT]


@pytest.mark.parametrize("text, keys", [
    ("2,5 jours ouvrables, soit 30 jours (cinq semaines)", ["2.5 jour", "30 jour", "5 semaine"]),
    ("deux jours et demi", ["2.5 jour"]),
    ("de 8h30 à 12 h 30, puis 21 h", ["8:30 h", "12:30 h", "21 h"]),
    ("48 heures | 48 h | quarante-huit heures", ["48 h", "48 h", "48 h"]),
    ("1 500 € brut, 25 %, 22 euros, vingt-six semaines", ["1500 €", "25 %", "22 €", "26 semaine"]),
    ("le 0 800 44 12 12 ou le poste 4500", ["tel 0800441212", "4500"]),
    ("l’article 5, art. L. 1234-5", ["art 5", "art l1234-5"]),
    ("avant le 1er mars, le 31/05, en février", ["1/03", "31/05", "month 02"]),
    ("un mois, une fois, un salarié, une demi-journée", ["1 mois", "1 fois", "0.5 jour"]),
    ("un troisième enfant, en seconde classe", ["3 e", "2 e"]),
])
def test_figures_are_read_one_way_however_they_are_written(text, keys):
    assert [f.key for f in figures.figures(text)] == keys


def test_a_figure_is_held_by_the_same_value_and_unit_or_the_value_written_bare():
    held = figures.keys("entre 21 h et 6 h ; une participation de 20 à 40 % ; 482 salariés")
    assert figures.unsupported("La nuit commence à 21 heures.", ["entre 21 h et 6 h"]) == []
    assert figures.unsupported("12 h 30", ["entre 21 h et 6 h"]) == ["12 h 30"]
    assert figures.supported(figures.figures("20 %")[0], held)  # « 20 à 40 % » writes 20 bare
    assert figures.supported(figures.figures("482")[0], held)   # a bare count under any unit
    assert not figures.supported(figures.figures("21 jours")[0], held)  # 21 h is not 21 days
    assert figures.unsupported("appelez le poste 4500", ["Appelez le 0 800 44 12 12."]) == ["4500"]
    assert figures.unsupported("Aucun chiffre ici.", []) == []


def test_a_quote_is_found_after_whitespace_case_quotes_and_apostrophes_and_nothing_looser():
    passage = "Six jours sont fixés par l’entreprise,\n  six sont posés « librement »."
    assert claims.found("six jours sont fixés par l'entreprise, six sont posés \"librement\"", passage)
    assert claims.found("« SIX JOURS SONT FIXÉS »", passage)  # the marks around a quote are how it was quoted
    for looser in ("six jours sont fixes", "Six jours … six sont posés", "sept jours sont fixés", "", " . "):
        assert not claims.found(looser, passage), looser


def test_sentences_end_at_punctuation_not_after_an_abbreviation_and_a_pdf_line_break_is_a_space():
    text = "Titre\n\nVoir l’art. 5 du règlement. M. Dupont\nsigne le bon.\n- un tiret\n- un autre\n\nFin ? Oui."
    assert claims.sentences(text) == ["Titre", "Voir l’art. 5 du règlement.", "M. Dupont signe le bon.",
                                      "- un tiret", "- un autre", "Fin ?", "Oui."]
    assert claims.heading_and_body("Titre\n\nCorps.") == ("Titre", "Corps.")
    assert claims.heading_and_body("Une phrase.\n\nCorps.")[0] is None


# ---------------------------------------------------------------- pointing: the model chooses, code copies

def test_pointing_sends_numbered_sentences_under_a_schema_of_those_numbers_and_copies_the_chosen_ones():
    client = ScriptedClient(['{"phrases": [1]}'])
    out = rag.answer_with_details("Combien de jours de RTT par an ?", SENT, client, mode="pointing")
    assert out["mode"] == "pointing" and out["answer"] == RTT["body"].split(" Six")[0]
    assert out["quotes"] == [{"source": "rtt", "text": out["answer"]}] and out["sources"] == ["rtt"]
    prompt = client.calls[0]["messages"][0]["content"]
    # The title names the passage and is no sentence to choose; each sentence is one numbered line.
    assert '<extrait id="rtt" titre="Jours de RTT">\n[1] Au siège, les salariés travaillent 37 heures' in prompt
    assert "[2] Six jours sont fixés" in prompt and '<extrait id="nuit" titre="Travail de nuit">\n[3] L’équipe' in prompt
    schema = client.calls[0]["json_schema"]["properties"]["phrases"]
    assert schema["items"]["enum"] == [1, 2, 3] and schema["maxItems"] == rag.MAX_SENTENCES


def test_pointing_at_nothing_is_je_ne_sais_pas_and_at_a_number_never_sent_is_refused():
    point = {"mode": "pointing"}
    assert rag.answer("Le code wifi ?", SENT, ScriptedClient(['{"phrases": []}']), **point)["answer"] == "je ne sais pas"
    with pytest.raises(rag.AnswerNotGrounded, match=r"sentence\(s\) \[9\], never sent \(sent: 1 to 3\)"):
        rag.answer("Combien ?", SENT, ScriptedClient(['{"phrases": [9]}']), constrain=False, **point)
    with pytest.raises(rag.AnswerUnavailable, match="not a sentence number"):
        rag.answer("Combien ?", SENT, ScriptedClient(['{"phrases": [true]}'] * 2), **point)
    with pytest.raises(rag.AnswerUnavailable, match='"reponse" missing'):  # the default mode asks for words first
        rag.answer("Combien ?", SENT, ScriptedClient(['{"phrases": [1]}'] * 2))


def test_pointing_streams_each_sentence_once_its_number_is_complete():
    events = []
    client = ScriptedClient([{"chunks": ['{"phr', 'ases": [', "1", "0", ", 3", "]}"]}])
    long = [{"id": "a", "text": " ".join(f"Phrase {i}." for i in range(1, 13))}]
    out = rag.answer_with_details("Phrase ?", long, client, mode="pointing",
                                  on_event=lambda kind, p: events.append((kind, p)))
    assert [k for k, _ in events] == ["reading", "writing", "sentence", "sentence"]
    assert [p["text"] for k, p in events if k == "sentence"] == ["Phrase 10.", "Phrase 3."]  # never « Phrase 1. »
    assert out["answer"] == "Phrase 10. Phrase 3." and client.calls[0]["json_schema"] is not None


# ---------------------------------------------------------------- quoted: the model writes, and quotes

def quoted(answer, *pairs):
    return json.dumps({"answer": answer, "quotes": [{"source": s, "text": t} for s, t in pairs]})


def test_a_quote_not_in_its_passage_is_sent_back_once_naming_it_and_a_repaired_one_is_shown():
    client = ScriptedClient([quoted("12 jours.", ("rtt", "douze jours de RTT")),
                             quoted("12 jours.", ("rtt", "compensées par 12 jours de RTT"))])
    out = rag.answer_with_details("Combien de RTT ?", SENT, client, mode="quoted")
    assert out["answer"] == "12 jours." and out["repairs"] == 1 and out["calls"] == 2
    assert out["quotes"] == [{"source": "rtt", "text": "compensées par 12 jours de RTT"}]
    assert out["refused"] == ["the quote « douze jours de RTT » is not in passage « rtt »"]
    repair = client.calls[1]["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]  # the same conversation, one turn more
    assert "la citation « douze jours de RTT » n'est pas dans l'extrait « rtt »" in repair[2]["content"]


def test_a_quote_still_not_found_after_the_repair_is_refused_and_never_shown():
    bad = quoted("12 jours.", ("rtt", "douze jours de RTT"))
    with pytest.raises(rag.QuoteNotFound, match="not in passage « rtt » \\(after one repair round trip\\)") as err:
        rag.answer("Combien de RTT ?", SENT, ScriptedClient([bad, bad]), mode="quoted")
    assert isinstance(err.value, rag.AnswerNotGrounded) and err.value.details["calls"] == 2
    cited_unquoted = json.dumps({"answer": "Voir.", "quotes": [], "sources": ["rtt"]})
    with pytest.raises(rag.QuoteNotFound, match="passage « rtt » is cited without a quote"):
        rag.answer("Combien ?", SENT, ScriptedClient([cited_unquoted, cited_unquoted]), mode="quoted")
    with pytest.raises(rag.QuoteNotFound, match="could not be read"):
        rag.answer("Combien ?", SENT, ScriptedClient([bad, "pas du JSON"]), mode="quoted")
    with pytest.raises(rag.AnswerNotGrounded, match="never sent"):  # an invented id: refused at once, as before
        rag.answer("Combien ?", SENT, ScriptedClient([quoted("x", ("ailleurs", "x"))]), mode="quoted", constrain=False)


def test_the_quoted_schema_allows_only_the_ids_sent_as_each_quotes_source():
    schema = rag.schema_for(rag.prepare_passages(SENT), "quoted")
    assert schema["properties"]["quotes"]["items"]["properties"]["source"]["enum"] == ["rtt", "nuit"]


# ---------------------------------------------------------------- figures: in every mode

def test_a_figure_no_cited_passage_holds_is_repaired_once_then_refused_in_the_free_mode_too():
    wrong = '{"answer": "L\'équipe de nuit commence à 12 h 30.", "sources": ["nuit"]}'
    right = '{"answer": "L\'équipe de nuit commence à 21 h.", "sources": ["nuit"]}'
    client = ScriptedClient([wrong, right])
    out = rag.answer_with_details("À quelle heure commence la nuit ?", SENT, client, mode="free")
    assert out["answer"].endswith("21 h.") and out["repairs"] == 1
    assert "le chiffre « 12 h 30 » n'est dans aucun extrait cité" in client.calls[1]["messages"][2]["content"]
    with pytest.raises(rag.UnsupportedFigure, match="the figure « 12 h 30 » is in no cited passage"):
        rag.answer("À quelle heure ?", SENT, ScriptedClient([wrong, wrong]), mode="free")
    # Held by the question itself: echoing « 23 heures » is not a claim.
    echo = '{"answer": "À 23 h, personne n\'est tenu de répondre.", "sources": ["nuit"]}'
    assert rag.answer("Mon chef m'écrit à 23 heures ?", SENT, ScriptedClient([echo]), mode="free")["answer"]
    # Off, it is today's free answer: shown as the model wrote it.
    assert rag.answer("?", SENT, ScriptedClient([wrong]), mode="free", check_figures=False)["answer"].endswith("12 h 30.")


def test_a_figure_in_the_quote_but_not_the_answer_context_passes_what_no_check_can_catch():
    # « 6 jours » for the 12 RTT days: a true quote under a wrong conclusion passes every check.
    reply = quoted("6 jours de RTT par an.", ("rtt", "Six jours sont fixés par l’entreprise"))
    assert rag.answer("Combien de RTT par an ?", SENT, ScriptedClient([reply]), mode="quoted")["answer"] == \
        "6 jours de RTT par an."


def test_the_mode_and_the_new_knobs_are_checked_before_any_call():
    silent = ScriptedClient([])
    for knobs, name in [({"mode": "guess"}, "mode"), ({"check_figures": "yes"}, "check_figures"),
                        ({"sentences_sent": 0}, "sentences_sent"), ({"on_event": 3}, "on_event")]:
        with pytest.raises(BadArgument, match=name):
            rag.answer("Combien ?", SENT, silent, **knobs)
    assert silent.calls == []


# ---------------------------------------------------------------- N5: the report's quotes and figures

def test_the_research_report_carries_a_quote_per_citation_and_marks_an_unsupported_figure():
    sink = research.ListSink()
    pages = [RTT, NIGHT, {"id": "autre", "title": "Autre", "body": "Rien à voir."}]
    out = research.run("Combien de RTT ?", pages=pages, client=ScriptedClient(
        ["Vous avez 12 jours de RTT par an [1], et une pause de 45 minutes [1]."]), follow_ups=False, sink=sink)
    assert out["answered"] and out["sources"] == ["rtt"]
    assert out["quotes"][0]["source"] == "rtt" and "12 jours de RTT" in out["quotes"][0]["text"]
    assert claims.found(out["quotes"][0]["text"], RTT["body"])
    assert out["unsupported_figures"] == ["45 minutes"]
    assert "unsupported figure: « 45 minutes » is in no cited source" in out["notes"]
    assert [e for e in sink if e["type"] == "checked"][0]["unsupported_figures"] == ["45 minutes"]


def test_a_lead_in_is_shown_before_the_sentences_that_hold_its_figures_or_dropped():
    speed = {"id": "vitesse", "title": "Sécurité", "body": "Le référent fait le tour des zones. "
             "Vitesse maximale dans l’entrepôt : 6 km/h ; 4 km/h dans les chambres froides."}
    ask = lambda reply: rag.answer_with_details("Quelle vitesse ?", [speed], ScriptedClient([json.dumps(reply)]),
                                                mode="pointing-lead")
    # The model pointed beside its own words: the sentence that holds « 6 km/h » is the one shown.
    out = ask({"reponse": "La limite est de 6 km/h.", "phrases": [1]})
    assert out["answer"] == "La limite est de 6 km/h. Vitesse maximale dans l’entrepôt : 6 km/h ; 4 km/h dans les chambres froides."
    assert out["phrases"] == [2] and out["quotes"][0]["text"].startswith("Vitesse maximale")
    # A figure no sentence holds: the lead-in is dropped, said, and the sentences stay the answer.
    out = ask({"reponse": "10 km/h", "phrases": [2]})
    assert out["answer"].startswith("Vitesse maximale") and out["lead"] == ""
    assert out["refused"] == ["lead-in dropped: the figure « 10 km/h » is in no cited passage"]
    # « Je ne sais pas » in words is the no-answer, whatever is pointed at; a lead copied from the sentence is shown once.
    assert ask({"reponse": "Je ne sais pas.", "phrases": [1]})["answer"] == "je ne sais pas"
    assert ask({"reponse": "6 km/h", "phrases": [2]})["answer"].startswith("Vitesse maximale dans")
    schema = rag.schema_for(rag.prepare_passages([speed]), "pointing-lead")
    assert list(schema["properties"]) == ["reponse", "phrases"] and schema["properties"]["reponse"]["maxLength"] == 60
