"""Claims checked by code: quotes found word for word, figures read one way, N3's three modes with scripted replies.

Every reply here is written by hand (``ScriptedClient``, a test double): the contract is what the code
does with it — the repair round trip, each refusal, what the pointing mode copies.
"""

import json

import pytest

from rungs import rag
from rungs.grounding import Status, claims, figures
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
    out = rag.answer("Combien de jours de RTT par an ?", SENT, client, mode="pointing")
    assert out.by == "rag pointing" and out.text == RTT["body"].split(" Six")[0]
    assert [(q.source, q.text) for q in out.quotes] == [("rtt", out.text)] and out.cited == ("rtt",)
    prompt = client.calls[0]["messages"][0]["content"]
    # The title names the passage and is no sentence to choose; each sentence is one numbered line.
    assert '<extrait id="rtt" titre="Jours de RTT">\n[1] Au siège, les salariés travaillent 37 heures' in prompt
    assert "[2] Six jours sont fixés" in prompt and '<extrait id="nuit" titre="Travail de nuit">\n[3] L’équipe' in prompt
    numbers, none = client.calls[0]["json_schema"]["properties"]["phrases"]["anyOf"]
    assert numbers["items"]["enum"] == [1, 2, 3] and numbers["maxItems"] == rag.MAX_SENTENCES
    assert none == {"const": "aucune"}  # « no sentence answers » is a choice of the schema


def test_pointing_at_nothing_is_je_ne_sais_pas_and_at_a_number_never_sent_is_refused():
    point = {"mode": "pointing"}
    assert rag.answer("Le code wifi ?", SENT, ScriptedClient(['{"phrases": []}']), **point).text == "je ne sais pas"
    with pytest.raises(rag.AnswerNotGrounded, match=r"sentence\(s\) \[9\], never sent \(sent: 1 to 3\)"):
        rag.answer("Combien ?", SENT, ScriptedClient(['{"phrases": [9]}']), constrain=False, **point).raise_for_status()
    with pytest.raises(rag.AnswerUnavailable, match="not a sentence number"):
        rag.answer("Combien ?", SENT, ScriptedClient(['{"phrases": [true]}'] * 2), **point).raise_for_status()
    with pytest.raises(rag.AnswerUnavailable, match='"reponse" missing'):  # the model's mode asks for words first
        rag.answer("Combien ?", SENT, ScriptedClient(['{"phrases": [1]}'] * 2), mode=rag.MODEL_MODE).raise_for_status()


def test_pointing_streams_each_sentence_once_its_number_is_complete():
    events = []
    client = ScriptedClient([{"chunks": ['{"phr', 'ases": [', "1", "0", ", 3", "]}"]}])
    long = [{"id": "a", "text": " ".join(f"Phrase {i}." for i in range(1, 13))}]
    out = rag.answer("Phrase ?", long, client, mode="pointing", on_event=lambda kind, p: events.append((kind, p)))
    assert [k for k, _ in events] == ["reading", "writing", "sentence", "sentence"]
    assert [p["text"] for k, p in events if k == "sentence"] == ["Phrase 10.", "Phrase 3."]  # never « Phrase 1. »
    assert out.text == "Phrase 10. Phrase 3." and client.calls[0]["json_schema"] is not None
    assert out.cost.calls == 1 and out.cost.output_tokens > 0


# ---------------------------------------------------------------- quoted: the model writes, and quotes

def quoted(answer, *pairs):
    return json.dumps({"answer": answer, "quotes": [{"source": s, "text": t} for s, t in pairs]})


def test_a_quote_not_in_its_passage_is_sent_back_once_naming_it_and_a_repaired_one_is_shown():
    client = ScriptedClient([quoted("12 jours.", ("rtt", "douze jours de RTT")),
                             quoted("12 jours.", ("rtt", "compensées par 12 jours de RTT"))])
    out = rag.answer("Combien de RTT ?", SENT, client, mode="quoted")
    assert out.text == "12 jours." and out.trace["repairs"] == 1 and out.cost.calls == 2
    assert [(q.source, q.text) for q in out.quotes] == [("rtt", "compensées par 12 jours de RTT")]
    assert out.notes == ("the quote « douze jours de RTT » is not in passage « rtt »",)
    repair = client.calls[1]["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]  # the same conversation, one turn more
    assert "la citation « douze jours de RTT » n'est pas dans l'extrait « rtt »" in repair[2]["content"]


def test_a_quote_still_not_found_after_the_repair_is_refused_and_never_shown():
    bad = quoted("12 jours.", ("rtt", "douze jours de RTT"))
    out = rag.answer("Combien de RTT ?", SENT, ScriptedClient([bad, bad]), mode="quoted")
    assert (out.status, out.text, out.cost.calls) == (Status.REFUSED, "", 2)
    with pytest.raises(rag.QuoteNotFound, match="not in passage « rtt » \\(after one repair round trip\\)") as err:
        out.raise_for_status()
    assert isinstance(err.value, rag.AnswerNotGrounded)
    cited_unquoted = json.dumps({"answer": "Voir.", "quotes": [], "sources": ["rtt"]})
    refused = lambda *replies, **kw: rag.answer("Combien ?", SENT, ScriptedClient(list(replies)), mode="quoted", **kw)
    with pytest.raises(rag.QuoteNotFound, match="passage « rtt » is cited without a quote"):
        refused(cited_unquoted, cited_unquoted).raise_for_status()
    with pytest.raises(rag.QuoteNotFound, match="could not be read"):
        refused(bad, "pas du JSON").raise_for_status()
    with pytest.raises(rag.AnswerNotGrounded, match="never sent"):  # an invented id: refused at once, as before
        refused(quoted("x", ("ailleurs", "x")), constrain=False).raise_for_status()


def test_the_quoted_schema_allows_only_the_ids_sent_as_each_quotes_source():
    schema = rag.schema_for(rag.prepare_passages(SENT), "quoted")
    assert schema["properties"]["quotes"]["items"]["properties"]["source"]["enum"] == ["rtt", "nuit"]


# ---------------------------------------------------------------- figures: in every mode

def test_a_figure_no_cited_passage_holds_is_repaired_once_then_refused_in_the_free_mode_too():
    wrong = '{"answer": "L\'équipe de nuit commence à 12 h 30.", "sources": ["nuit"]}'
    right = '{"answer": "L\'équipe de nuit commence à 21 h.", "sources": ["nuit"]}'
    client = ScriptedClient([wrong, right])
    out = rag.answer("À quelle heure commence la nuit ?", SENT, client, mode="free")
    assert out.text.endswith("21 h.") and out.trace["repairs"] == 1
    assert [(f.figure, f.held_by) for f in out.figures] == [("21 h", ("nuit",))]
    assert "le chiffre « 12 h 30 » n'est dans aucun extrait cité" in client.calls[1]["messages"][2]["content"]
    with pytest.raises(rag.UnsupportedFigure, match="the figure « 12 h 30 » is in no cited passage"):
        rag.answer("À quelle heure ?", SENT, ScriptedClient([wrong, wrong]), mode="free").raise_for_status()
    # Held by the question itself: echoing « 23 heures » is not a claim.
    echo = '{"answer": "À 23 h, personne n\'est tenu de répondre.", "sources": ["nuit"]}'
    held = rag.answer("Mon chef m'écrit à 23 heures ?", SENT, ScriptedClient([echo]), mode="free")
    assert held.answered and [(f.figure, f.held_by) for f in held.figures] == [("23 h", ("question",))]
    # Off, it is today's free answer: shown as the model wrote it, its figure listed as held by nothing.
    off = rag.answer("?", SENT, ScriptedClient([wrong]), mode="free", check_figures=False)
    assert off.text.endswith("12 h 30.") and off.unsupported == ["12 h 30"]


def test_a_figure_in_the_quote_but_not_the_answer_context_passes_what_no_check_can_catch():
    # « 6 jours » for the 12 RTT days: a true quote under a wrong conclusion passes every check.
    reply = quoted("6 jours de RTT par an.", ("rtt", "Six jours sont fixés par l’entreprise"))
    assert rag.answer("Combien de RTT par an ?", SENT, ScriptedClient([reply]), mode="quoted").text == \
        "6 jours de RTT par an."


def test_the_mode_and_the_new_knobs_are_checked_before_any_call():
    silent = ScriptedClient([])
    for knobs, name in [({"mode": "guess"}, "mode"), ({"check_figures": "yes"}, "check_figures"),
                        ({"sentences_sent": 0}, "sentences_sent"), ({"on_event": 3}, "on_event"),
                        ({"sink": 3}, "sink"), ({"sink": print, "on_event": print}, "not both")]:
        with pytest.raises(BadArgument, match=name):
            rag.answer("Combien ?", SENT, silent, **knobs)
    assert silent.calls == []


# ---------------------------------------------------------------- N5: the report's quotes and figures

def test_a_lead_in_is_shown_before_the_sentences_that_hold_its_figures_or_dropped():
    speed = {"id": "vitesse", "title": "Sécurité", "body": "Le référent fait le tour des zones. "
             "Vitesse maximale dans l’entrepôt : 6 km/h ; 4 km/h dans les chambres froides."}
    ask = lambda reply: rag.answer("Quelle vitesse ?", [speed], ScriptedClient([json.dumps(reply)]),
                                   mode="pointing-lead")
    # The model pointed beside its own words: the sentence that holds « 6 km/h » is the one shown.
    out = ask({"reponse": "La limite est de 6 km/h.", "phrases": [1]})
    assert out.text == "La limite est de 6 km/h.\nVitesse maximale dans l’entrepôt : 6 km/h ; 4 km/h dans les chambres froides."
    assert out.quotes[0].text.startswith("Vitesse maximale")
    # A figure no sentence holds: the lead-in is dropped, said, and the sentences stay the answer (issue 37:
    # dropped where the lead is read, against the sentence it rests on, before the passages' figure check).
    out = ask({"reponse": "10 km/h", "phrases": [2]})
    assert out.text.startswith("Vitesse maximale")
    assert out.notes == ("lead-in dropped: « 10 km/h »: its figure(s) 10 km/h are not in the sentence it rests on",)
    # « Je ne sais pas » in words is the no-answer, whatever is pointed at; a lead copied from the sentence is shown once.
    assert ask({"reponse": "Je ne sais pas.", "phrases": [1]}).text == "je ne sais pas"
    assert ask({"reponse": "6 km/h", "phrases": [2]}).text.startswith("Vitesse maximale dans")
    schema = rag.schema_for(rag.prepare_passages([speed]), "pointing-lead")
    assert list(schema["properties"]) == ["reponse", "phrases"]
    assert schema["properties"]["reponse"]["maxLength"] == rag.MAX_LEAD_CHARS + 40  # cut by code, after a word
    # « aucune » is the no-answer; a lead-in that restates the question is dropped, and said.
    assert ask({"reponse": "Je ne sais pas.", "phrases": "aucune"}).text == "je ne sais pas"
    out = ask({"reponse": "Quelle vitesse ?", "phrases": [2]})
    assert out.text.startswith("Vitesse maximale") and "restates the question" in out.notes[0]
    long = ask({"reponse": "La vitesse est limitée dans l’entrepôt et plus encore dans les chambres froides, où "
                           "les chariots roulent au pas pour la sécurité des préparateurs", "phrases": [2]})
    lead = long.text.split("\n")[0]
    assert lead.endswith(" …") and len(lead) <= rag.MAX_LEAD_CHARS + 2 and lead[:-2].split()[-1] in long.trace["replies"][0]


def test_a_long_lead_in_copied_from_its_sentence_is_shown_once_not_twice():
    # Seen in the abstention run (q003): a lead cut after a word (« … ») was no longer found in its sentence.
    page = {"id": "cp", "title": "Congés", "body": "Les jours non pris au 31 mai sont perdus, sauf report accordé "
                                                  "par écrit par votre responsable pour une raison de service."}
    lead = page["body"]  # longer than MAX_LEAD_CHARS: cut after a word, « … » added
    assert len(lead) > rag.MAX_LEAD_CHARS
    out = rag.answer("Que deviennent les jours non pris ?", [page],
                     ScriptedClient([json.dumps({"reponse": lead, "phrases": [1]})]), mode="pointing-lead")
    assert out.text == page["body"]


def test_without_the_no_answer_rule_the_schema_offers_no_aucune_and_the_gate_alone_declines():
    sent = rag.prepare_passages(SENT)
    numbered = rag.sentences_for("RTT ?", sent, None)
    with_rule = rag.schema_for(sent, "pointing-lead", numbered)["properties"]["phrases"]
    without = rag.schema_for(sent, "pointing-lead", numbered, none=False)["properties"]["phrases"]
    assert {"const": "aucune"} in with_rule["anyOf"] and "anyOf" not in without and without["minItems"] == 1
    client = ScriptedClient(['{"reponse": "12 jours.", "phrases": [1]}'])
    rag.answer("Combien de RTT ?", SENT, client, mode="pointing-lead", no_answer_rule=False)
    assert "anyOf" not in client.calls[0]["json_schema"]["properties"]["phrases"]
    assert "aucune" not in client.calls[0]["messages"][0]["content"]


def test_a_quote_of_a_letter_or_two_words_is_sent_back_then_refused_never_shown():
    # Finding (issue 43): the quoted mode showed an answer whose quote was one letter (« e » is in every passage).
    short = quoted("12 jours.", ("rtt", "e"))
    client = ScriptedClient([short, quoted("12 jours.", ("rtt", "compensées par 12 jours de RTT"))])
    out = rag.answer("Combien de RTT ?", SENT, client, mode="quoted")
    assert out.answered and out.trace["repairs"] == 1 and "is too short" in out.notes[0]
    assert "la citation « e » est trop courte" in client.calls[1]["messages"][2]["content"]
    two = quoted("12 jours.", ("rtt", "12 jours"))
    out = rag.answer("Combien de RTT ?", SENT, ScriptedClient([two, two]), mode="quoted")
    assert out.status is Status.REFUSED and out.text == ""
    with pytest.raises(rag.QuoteNotFound, match="too short to show what the answer rests on"):
        out.raise_for_status()
