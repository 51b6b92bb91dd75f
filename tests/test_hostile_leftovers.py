"""Issue 43's leftovers — the repair message's faults, the numbered sentences a prompt is built from, « lend »'s
lending, a template's format widths, figures inside terminal escapes, a Decimal duration, a reader named at
construction — then a small hostile probe of the same surfaces; each test seen failing before its fix."""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

import pytest

from rungs import hybrid, rag
from rungs.bm25 import build_index
from rungs.core.errors import BadArgument, RungsError, check_number
from rungs.core.retrieval import Hit
from rungs.grounding import claims, figures
from rungs.grounding.answer import Cost
from rungs.rag.answerers import Rag
from rungs.rag.build import check_prompt

PASSAGES = [{"id": "a", "text": "Congés\n\nOn a 25 jours de congés par an. Ils se posent en mai."},
            {"id": "b", "text": "Télétravail\n\nDeux jours par semaine."}]


# ---------------------------------------------------------------- 1 · repair_message's faults

@pytest.mark.parametrize("faults", [["x"], [{}], "abc", [{"kind": 5, "what": 3}], [{"kind": "quote", "what": "w"}],
                                    [{"kind": "figure", "what": "12", "source": None, "reason": 5}],
                                    [{"kind": "quote", "what": "w", "source": None, "reason": "r"}], None, {"kind": "quote"}],
                         ids=repr)
def test_a_repair_of_faults_of_the_wrong_shape_is_refused_by_name(faults):
    """Finding (A): a fault not a dict, without its kind or reason, raised AttributeError or KeyError; a reason
    that is no text or a quote without its source made a message that names nothing."""
    with pytest.raises(BadArgument, match="fault"):
        rag.repair_message(faults, "quoted")


def test_a_repair_of_the_faults_the_checks_write_still_reads():
    found = claims.faults({"answer": "12 jours", "sources": ["a"], "quotes": [{"source": "a", "text": "rien de tel"}]},
                          [{"id": "a", "text": "On a 25 jours."}], "Combien ?", quotes_required=True)
    said = rag.repair_message(found, "quoted")
    assert "rien de tel" in said and "« 12 jours »" in said


# ---------------------------------------------------------------- 2 · the numbered sentences a prompt shows

BAD_SENTENCES = ["abc", [1], [{"n": 1}], [{"n": 1, "source": "a"}], [{"n": 1, "source": "a", "text": 5}],
                 [{"n": True, "source": "a", "text": "t"}], {"n": 1, "source": "a", "text": "t"},
                 [{"n": 1, "source": "zz", "text": "hors des passages"}],
                 [{"n": 1, "source": "a", "text": "une"}, {"n": 1, "source": "b", "text": "deux"}]]


@pytest.mark.parametrize("sentences", BAD_SENTENCES, ids=repr)
def test_numbered_sentences_of_the_wrong_shape_are_refused_by_name(sentences):
    """Finding (A, C, D): a string was split into letters (TypeError), a dict without text raised, a sentence
    whose text is no text raised AttributeError; one of a passage not sent gave the schema a number the model
    could point at but was never shown (lost from the prompt, kept in the schema); two sentences numbered 1."""
    with pytest.raises(BadArgument, match="sentence"):
        rag.schema_for(PASSAGES, "pointing", sentences)
    with pytest.raises(BadArgument, match="sentence"):
        rag.build_prompt("Combien ?", PASSAGES, mode="pointing", sentences=sentences)


def test_the_sentences_sentences_for_writes_still_build():
    sentences = rag.sentences_for("", PASSAGES, None)
    assert rag.schema_for(PASSAGES, "pointing", sentences)["properties"]["phrases"]
    assert "[1]" in rag.build_prompt("Combien ?", PASSAGES, mode="pointing", sentences=sentences)


# ---------------------------------------------------------------- 3 · lend

VECTOR = [Hit("b", 0.9), Hit("a", 0.1)]
KEYWORD = [Hit("a", 1.0, parts={"conges": 1.0, "mai": 0.0}), Hit("b", 0.5, parts={"conges": 0.5, "mai": 0.0})]


def test_lend_over_keyword_hits_without_parts_says_the_coverage_is_unknown_and_lends_nothing():
    """Finding (C): a keyword leg whose hits carry no parts read as coverage 1, silently."""
    hits = hybrid.lend({"keyword": [Hit("a", 1.0), Hit("b", 0.5)], "vector": VECTOR})
    assert all(h.extra["coverage"] is None and h.extra["lent"] == 0 for h in hits)
    assert all("unknown" in h.extra["lending"] for h in hits)


def test_lend_clips_what_it_lends_at_the_largest_leg_weight_and_says_so():
    """Finding (A): the vector leg's weight plus what was lent passed MAX_LEG_WEIGHT at search time, and rrf
    refused a weight the caller never set."""
    big = hybrid.MAX_LEG_WEIGHT
    hits = hybrid.lend({"keyword": KEYWORD, "vector": VECTOR}, leg_weights={"keyword": big, "vector": big * 0.9})
    assert hits and all("clipped" in h.extra["lending"] and "MAX_LEG_WEIGHT" in h.extra["lending"] for h in hits)
    assert hits[0].extra["lent"] == pytest.approx(big * 0.1)


def test_lend_to_a_vector_leg_of_weight_0_lends_nothing():
    """Finding (C): a vector leg switched off (weight 0) was lent weight all the same, and led the fusion."""
    hits = hybrid.lend({"keyword": KEYWORD, "vector": VECTOR}, leg_weights={"keyword": 1.0, "vector": 0.0})
    assert [h.id for h in hits] == ["a", "b"] and all(h.extra["lent"] == 0 for h in hits)
    assert all("weighs 0" in h.extra["lending"] for h in hits)
    assert hybrid.lend({"keyword": KEYWORD, "vector": VECTOR})[0].extra["lent"] == 0.5  # and it still lends


# ---------------------------------------------------------------- 4 · a template's format widths

@pytest.mark.parametrize("template", ["{passages}{question}{question:>10000000}", "{passages}{question:>9}",
                                      "{passages}{question!r}", "{passages}{question}{no_answer:\x1b[2J}"])
def test_a_template_with_a_format_on_a_place_is_refused_at_once(template):
    """Finding (A, E): « {question:>10000000} » built a prompt of ten million spaces (a billion: a denial of
    service), and was checked by filling it; a spec of terminal escapes was quoted raw in the refusal."""
    started = time.perf_counter()
    with pytest.raises(BadArgument, match="write each place bare") as err:
        rag.build_prompt("Combien ?", PASSAGES, prompt=template)
    assert time.perf_counter() - started < 0.5 and "\x1b" not in str(err.value)
    assert check_prompt("{passages}{question}{{ a brace }}")  # braces of one's own, doubled, still pass


@pytest.mark.parametrize("template", ["{passages}{question}{question[\x1b]}", "{passages}{question}{no_answer[\x1b]}"])
def test_a_template_with_a_place_of_its_own_is_refused_by_name_without_its_escapes(template):
    """Finding (A, E): « {question[\x1b]} » raised a bare TypeError (the template was checked by filling it)."""
    with pytest.raises(BadArgument, match="prompt must use only") as err:
        check_prompt(template)
    assert "\x1b" not in str(err.value)


def test_a_template_whose_places_are_doubled_braces_is_refused_as_missing_them():
    """Finding (C): « {{passages}} » is the text « {passages} »: the check read it as the place, and the prompt
    went without a single extract."""
    with pytest.raises(BadArgument, match="must contain {passages}"):
        check_prompt("{{passages}} {question}")


# ---------------------------------------------------------------- 5 · figures inside terminal escapes

@pytest.mark.parametrize("text, held", [("\x1b[31mLes congés\x1b[0m durent 25 jours", {"25 jour"}),
                                        ("\x1b]0;titre 42\x07 5 jours", {"5 jour"}),
                                        ("\x1b]8;;http://x/12\x1b\\lien\x1b]8;;\x1b\\ 3 h", {"3 h"}),
                                        ("\x9b2J 4 km", {"4 km"}), ("\x1b[1;33;44m1 500 €\x1b[m", {"1500 €"})])
def test_no_figure_is_read_inside_a_terminal_escape(text, held):
    """Finding (C): « \\x1b[31m » read as a figure 31, so an answer echoing a page's colours had a figure to check."""
    assert figures.keys(text) == held
    assert figures.unsupported("\x1b[31mOui\x1b[0m, 25 jours.", ["On a 25 jours."]) == []


# ---------------------------------------------------------------- 6 · a duration of any real type

@pytest.mark.parametrize("seconds", [Decimal("1.5"), Decimal("3E-1")])
def test_a_cost_takes_seconds_of_any_real_type(seconds):
    """Finding (C): Cost refused Decimal("1.5"), a real number core.errors.check_number accepts."""
    assert Cost(seconds=seconds).seconds == float(seconds)
    assert Cost(seconds=Fraction(3, 2)).seconds == Cost(seconds=1.5).seconds == 1.5


@pytest.mark.parametrize("seconds", [Decimal("NaN"), Decimal("1e999"), 10**400, -1, "1.5", None])
def test_a_cost_refuses_seconds_as_check_number_does(seconds):
    with pytest.raises(BadArgument) as said:
        Cost(seconds=seconds)
    with pytest.raises(BadArgument) as expected:
        check_number(seconds, "seconds", low=0.0, high=1e9)
    assert str(said.value) == str(expected.value)


# ---------------------------------------------------------------- 7 · a reader named at construction

def _rag(**knobs):
    docs = [{"id": "a", "title": "Congés", "body": "On a 25 jours de congés."}]
    return Rag(build_index(docs), docs, **knobs)


def test_a_rag_of_an_unknown_mode_is_refused_at_construction_naming_the_readers():
    """Finding (A): Rag(mode="nope") was refused only at the first question."""
    with pytest.raises(BadArgument, match="mode must be one of 'pointing'.*'copy'"):
        _rag(mode="nope")
    assert _rag(mode="copy").name == "rag copy"


@pytest.mark.parametrize("knob", ["nope", "hits"])
def test_a_rag_of_an_unknown_knob_is_refused_at_construction(knob):
    """Finding (A): a knob rag.answer does not take raised a bare TypeError at the first question."""
    with pytest.raises(RungsError, match=f"no knob '{knob}'"):
        _rag(**{knob: 1})


# ---------------------------------------------------------------- the probe's own findings, per class

@pytest.mark.parametrize("parts", [{"conges": float("nan"), "mai": 1.0}, {"conges": float("inf")}, [1, 2], "abc"],
                         ids=repr)
def test_lend_refuses_keyword_parts_it_cannot_count_by_name(parts):
    """Finding (C, A): a NaN part read as a word missed (coverage 0.5, lending half), silently; parts given as a
    list or a text raised AttributeError."""
    with pytest.raises(BadArgument, match="finite scores per word"):
        hybrid.lend({"keyword": [Hit("a", 1.0, parts=parts)], "vector": VECTOR})


def test_figures_of_a_text_full_of_escape_starts_are_read_in_linear_time():
    """Finding (A, a denial of service): a string escape's start scanned past every other start — 50,000 of
    « \\x9d » took 87 s."""
    started = time.perf_counter()
    assert figures.keys("\x9d" * 20_000 + " 5 jours") == {"5 jour"}
    assert time.perf_counter() - started < 2


@pytest.mark.parametrize("search", ["abc", [1, 2]])
def test_a_rag_whose_search_knobs_are_no_dict_is_refused_by_name(search):
    """Finding (A): dict("abc") raised a bare ValueError (a list, a TypeError)."""
    with pytest.raises(BadArgument, match="search must be a dict"):
        _rag(search=search)


def test_sentences_given_in_a_mode_that_numbers_none_are_still_checked():
    """Finding (C): sentences="abc" in free mode was ignored without a word."""
    with pytest.raises(BadArgument, match="sentences must be a list"):
        rag.build_prompt("Combien ?", PASSAGES, mode="free", sentences="abc")


def test_a_sentence_number_is_a_bounded_whole_number_written_as_python_s():
    """Finding (A, C): n = 10**400 went into the schema; numpy's 1 was refused at first, then kept as numpy's
    (json.dumps of the schema raised TypeError)."""
    import json

    import numpy as np

    with pytest.raises(BadArgument, match="a whole number from 1"):
        rag.schema_for(PASSAGES, "pointing", [{"n": 10**400, "source": "a", "text": "t"}])
    schema = rag.schema_for(PASSAGES, "pointing", [{"n": np.int64(1), "source": "a", "text": "t"}])
    assert json.loads(json.dumps(schema))["properties"]["phrases"]["anyOf"][0]["items"]["enum"] == [1]


@pytest.mark.parametrize("reader", ["abstention_summary", "abstention_decision", "folder_default"])
def test_a_stored_results_file_that_is_a_fifo_or_a_folder_is_refused_not_waited_on(tmp_path, reader):
    # One reader of a results file (rungs.lab.stored): abstention_decision.load opened a FIFO and waited forever.
    import importlib
    import os
    import signal

    module = importlib.import_module(f"rungs.lab.{reader}")
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    class Waited(BaseException):  # not an OSError: a reader's « except OSError » must not swallow the alarm
        pass

    old = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(Waited("waited on a FIFO")))
    signal.alarm(5)
    try:
        for path in (fifo, tmp_path):
            with pytest.raises(RungsError, match="cannot be read .*: run benchmarks/bench_"):
                module.load(path)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
