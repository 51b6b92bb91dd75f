"""The answer contract, checked over every answerer the package defines — found, not listed.

Every ``Answerer`` subclass in ``rungs`` is discovered by walking the package;
each must have a builder here (a new answerer without one fails
``test_every_answerer_has_a_builder``), and every check of
``rungs.grounding.contract`` runs on every answer each builder's answerers give
when driven by a model double that behaves every way a model can (faithful,
abstaining, forging a citation, inventing a figure, echoing the fence, writing
garbage, nothing, being down, miscounting its tokens: ``tests/answer_doubles.py``).
Negative controls: a planted answer that breaks each promise fails its check, and the answerers planted
broken in the package (``rungs.grounding.doubles.PLANTED``: forging, inventing, echoing the fence, failing
with a raw exception) run through the same discovered, parametrised path and must fail there, the breach
named. Every public callable that takes a model ``client`` is checked here or in ``NOT_ANSWERERS`` with why.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import rungs
from rungs import bm25
from rungs.grounding import Answer, Answerer, Cost, FigureCheck, Quote, Status
from rungs.grounding import contract
from rungs.grounding.contract import AnswerContractBroken, check_answer
from rungs.grounding.doubles import Forges as PLANTED_FORGES
from rungs.rag import READERS

from answer_doubles import BEHAVIOURS, PLANTED, Behaving

PAGES = [
    {"id": "conges", "title": "Congés payés", "body": "Chaque salarié acquiert 2,5 jours ouvrables par mois. "
                                                       "Les congés d'été se posent avant le 31 mars."},
    {"id": "badge", "title": "Badge", "body": "Un badge perdu se signale à l'accueil. Le remplacement coûte 10 €."},
    {"id": "repas", "title": "Restaurant", "body": "Le restaurant d'entreprise ouvre de 11 h 30 à 14 h."},
]
QUESTION = "Combien de jours de congés par mois ?"


def _keyword():
    return bm25.build_index(PAGES, stopwords=True)


def _rag(mode, **knobs):
    from rungs.rag import Rag

    return lambda client: Rag(_keyword(), PAGES, client, mode=mode, **knobs)


def _research(mode):
    from rungs.research import Researcher

    # The keyword leg alone: the contract is about what the loop shows, not which encoder ranks the pages.
    return lambda client: Researcher(PAGES, client, retriever=_keyword(), mode=mode)


#: Each answerer class → the configurations it is checked in, each a function of a model client.
BUILDERS = {
    # Every reader of the one table — the copy with its decision (the default) — and the floor alone, no decision.
    "rungs.rag.answerers.Rag": [_rag(m) for m in READERS] + [_rag("copy", decision=None)],
    "rungs.research.answerers.Researcher": [_research(m) for m in ("quick", "research")],
    # The answerers planted broken in the package's test-double home: each must fail, naming its breach.
    **{f"{c.__module__}.{c.__qualname__}": [c] for c in PLANTED},
}
#: Each planted answerer → the breach the run must name (declared in ``rungs.grounding.doubles.PLANTED``).
MUST_BREAK = {f"{c.__module__}.{c.__qualname__}": breach for c, breach in PLANTED.items()}


def answerer_classes():
    """Every concrete Answerer subclass of the package, found by walking it."""
    found = {}
    for info in pkgutil.walk_packages(rungs.__path__, "rungs."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Answerer) and cls is not Answerer and not inspect.isabstract(cls) \
                    and cls.__module__ == module.__name__:
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


def test_every_answerer_has_a_builder():
    classes = answerer_classes()
    assert "rungs.rag.answerers.Rag" in classes  # the discovery finds what we know is there
    missing = sorted(set(classes) - set(BUILDERS))
    assert not missing, f"answerers without a builder in tests/test_answer_contract.py: {missing}"


#: The builders whose answerer asks no model (« copy » without its decision).
MODEL_FREE = {("rungs.rag.answerers.Rag", len(READERS))}
#: The builders whose only call is the decision's gate (« copy », the default): the copy is shown or it is not.
DECIDED = {("rungs.rag.answerers.Rag", READERS.index("copy"))}
CASES = [(name, i, b) for name, builds in BUILDERS.items() for i in range(len(builds)) for b in BEHAVIOURS]


@pytest.mark.parametrize("name, i, behaviour", CASES, ids=[f"{n.rsplit('.', 1)[1]}{i}-{b}" for n, i, b in CASES])
def test_every_answer_keeps_the_contract_whatever_the_model_does(name, i, behaviour):
    if name in MUST_BREAK:  # a planted answerer: the same run must refuse it, and say which promise it broke
        with pytest.raises(AnswerContractBroken, match=MUST_BREAK[name]):
            contract.check_answerer(BUILDERS[name][i], QUESTION, (behaviour,))
        return
    seen = {}
    answer = contract.check_answerer(lambda c: BUILDERS[name][i](seen.setdefault("client", c)), QUESTION,
                                     (behaviour,))[behaviour]
    client = seen["client"]
    if (name, i) in MODEL_FREE:  # the floor asks no model: whatever a model would do, it copies
        assert answer.status is Status.ANSWERED and not client.calls and answer.cost.calls == 0, answer
        return
    if (name, i) in DECIDED:  # one yes/no call, whatever it says; its verdict in the trace
        if behaviour == "down":  # no other call would say the model is down: the gate's failure does
            assert answer.status is Status.UNAVAILABLE and "unreachable" in answer.reason, answer
            return
        assert answer.status in (Status.ANSWERED, Status.NO_ANSWER) and answer.cost.calls == 1, answer
        assert "decision" in answer.trace and len(client.calls) == 1 and client.calls[0]["logprobs"], answer
        if behaviour == "abstains":  # the gate said « Non »: P(yes) low, and so the decision's P(right)
            assert answer.trace["decision"]["signals"]["gate"] < 0.1, answer.trace["decision"]
        return
    if behaviour in ("down", "garbage", "empty", "bad_counts"):
        assert answer.status is Status.UNAVAILABLE, (behaviour, answer)
    if behaviour == "faithful":
        assert answer.status is Status.ANSWERED, answer
    if behaviour == "abstains":
        assert answer.status is Status.NO_ANSWER, answer
    if behaviour in ("forges", "invents_figure", "echoes_fence"):
        assert answer.status is not Status.ANSWERED or not answer.unsupported, answer
    assert answer.cost.calls >= len([c for c in client.calls if not c.get("logprobs")]) or behaviour == "down"


# ---------------------------------------------------------------- negative controls: each check catches its breach

SENT = {"a": "Le préavis est de trois mois.", "b": "Le badge coûte 10 €."}
GOOD = Answer(question="Quel préavis ?", status=Status.ANSWERED, text="Le préavis est de trois mois.", sent=SENT,
              cited=("a",), quotes=(Quote("a", "Le préavis est de trois mois."),), figures=(FigureCheck("3 mois", ("a",)),),
              cost=Cost(1, 10, 0, 5, 0.1), trace={"fences": ("<extrait",)})

BREACHES = {
    "check_status": GOOD.with_(status=Status.ANSWERED, text="Je ne sais pas."),
    "check_refusal_not_shown": GOOD.with_(status=Status.REFUSED, reason="a figure"),
    "check_cost": GOOD.with_(cost=Cost(), text="Trois mois, d'après le texte."),  # a model's words, no call
    "check_cited_were_sent": GOOD.with_(cited=("a", "z")),
    "check_quotes_found": GOOD.with_(quotes=(Quote("a", "Le préavis est de deux mois."),)),
    "check_figures_supported": GOOD.with_(text="Le préavis est de 987 jours.", figures=()),
    "check_no_scaffolding": GOOD.with_(text='<extrait id="a"> Le préavis est de trois mois.'),
}


def test_a_good_answer_passes_every_check():
    check_answer(GOOD)


@pytest.mark.parametrize("check", [c.__name__ for c in contract.CHECKS])
def test_each_check_catches_the_breach_planted_for_it(check):
    bad = BREACHES[check]
    with pytest.raises(AnswerContractBroken):
        getattr(contract, check)(bad)


def test_every_check_has_a_planted_breach():
    assert set(BREACHES) == {c.__name__ for c in contract.CHECKS}


def test_every_planted_answerer_is_found_by_discovery():
    assert set(MUST_BREAK) <= set(answerer_classes()), "a planted answerer is not found by walking the package"


def test_check_answerer_holds_a_good_answerer_and_names_a_broken_one():
    """Issue 40: a learner holds their own answerer to the contract in one call."""
    answers = contract.check_answerer(_rag("copy", decision=None))
    assert set(answers) == set(BEHAVIOURS) and all(a.answered for a in answers.values())
    with pytest.raises(AnswerContractBroken, match="forges: check_cited_were_sent") as caught:
        contract.check_answerer(PLANTED_FORGES)
    assert caught.value.args[0].count("check_cited_were_sent") == len(BEHAVIOURS)  # every behaviour, named


def test_a_client_that_miscounts_is_named_not_summed():
    from rungs.model.contract import BadResponse

    with pytest.raises(BadResponse, match="input_tokens"):
        Cost.of_counts("abc", 3)
    with pytest.raises(BadResponse, match="reused"):
        Cost.of_counts(3, 3, reused_tokens=4)
    assert sum([Cost(1, 2, 3, 4, 0.5), Cost(1, 1, 0, 1, 0.25)]) == Cost(2, 3, 3, 5, 0.75)


@pytest.mark.parametrize("name", ["cited", "quotes", "figures", "notes"])
def test_a_str_for_a_tuple_field_is_refused_by_name(name):
    """Finding: ``Answer(cited='a.md#1')`` became the citations 'a', '.', 'm', 'd'… and ``notes='une note'``
    eight one-letter notes; ``with_`` took the same road."""
    from rungs.core.errors import BadArgument

    with pytest.raises(BadArgument, match=name):
        Answer(question="q ?", status=Status.NO_ANSWER, **{name: "a.md#1"})
    with pytest.raises(BadArgument, match=name):
        GOOD.with_(**{name: "une note"})
    assert GOOD.with_(cited=["a"], notes=["une note"]).notes == ("une note",)  # a list is still a tuple's worth


@pytest.mark.parametrize("name, value, said", [("cited", None, "list or tuple"), ("notes", 5, "list or tuple"),
                                               ("figures", None, "list or tuple"), ("quotes", {"a": 1}, "list or tuple"),
                                               ("quotes", [1, 2], "Quote only"), ("cited", ["a.md#1", 5], "passage ids only"),
                                               ("notes", [None], "notes in words only")])
def test_a_tuple_field_that_is_no_list_or_holds_the_wrong_items_is_refused_by_name(name, value, said):
    """Probe of issue 43: ``Answer(cited=None)`` or ``notes=5`` raised a bare TypeError from tuple();
    ``quotes=[1, 2]`` and ``cited=['a.md#1', 5]`` were kept, to fail far away (a quote without text)."""
    from rungs.core.errors import BadArgument

    with pytest.raises(BadArgument, match=f"{name} must .*{said}"):
        Answer(question="q ?", status=Status.NO_ANSWER, **{name: value})


def test_with_names_a_field_an_answer_does_not_have():
    """Probe of issue 43: ``with_(nope=1)`` raised dataclasses' bare TypeError « unexpected keyword argument »."""
    from rungs.core.errors import BadArgument

    with pytest.raises(BadArgument, match="no field nope: it holds question, status"):
        GOOD.with_(nope=1)


@pytest.mark.parametrize("field, value", [("seconds", 10 ** 400), ("calls", 10 ** 5000),
                                          ("output_tokens", 10 ** 16), ("seconds", 1e300)],
                         ids=["seconds-10e400", "calls-10e5000", "tokens-10e16", "seconds-1e300"])
def test_an_absurd_cost_is_refused_by_name(field, value):
    """Finding: ``Cost(seconds=10**400)`` raised OverflowError, ``str(Cost(calls=10**5000))`` a ValueError."""
    from rungs.core.errors import BadArgument

    with pytest.raises(BadArgument, match=field):
        str(Cost(**{"calls": 1, field: value}))


def test_a_fence_in_capitals_is_still_scaffolding():
    """Finding: « <EXTRAIT id=…> » passed the contract: fences were read case by case."""
    with pytest.raises(AnswerContractBroken, match="fences"):
        contract.check_no_scaffolding(GOOD.with_(text='<EXTRAIT id="a"> Le préavis est de trois mois.'))


@pytest.mark.parametrize("name, value", [("text", None), ("question", b"q ?"), ("reason", 3), ("by", None),
                                         ("sent", ["a"]), ("trace", [])])
def test_a_text_or_dict_field_of_the_wrong_type_is_refused_by_name(name, value):
    """Probe (issue 43): ``Answer(text=None)`` printed « answer: » for an answered answer, ``question=b'…'`` and
    ``sent=['a']`` were kept as given (a list of sent passages has no ids)."""
    from rungs.core.errors import BadArgument

    with pytest.raises(BadArgument, match=f"{name} must be"):
        Answer(**{"question": "q ?", "status": Status.NO_ANSWER, name: value})


def test_a_trace_that_holds_itself_is_refused_by_name_and_a_real_number_is_a_duration():
    """Probe (issue 43): ``to_dict`` of a trace holding itself raised RecursionError; ``Cost(seconds=Fraction(1, 3))``
    was refused as « must be a finite number … not Fraction(1, 3) », and numpy's counts as not whole numbers."""
    from fractions import Fraction

    import numpy as np

    from rungs.core.errors import BadArgument

    loop = {}
    loop["me"] = loop
    with pytest.raises(BadArgument, match="trace holds itself"):
        Answer(question="q ?", status=Status.NO_ANSWER, trace=loop).to_dict()
    assert Cost(seconds=Fraction(1, 4)).seconds == 0.25 and Cost(seconds=np.float32(0.5)).seconds == 0.5
    assert Cost(calls=np.int64(2)).calls == 2 and type(Cost(calls=np.int64(2)).calls) is int


@pytest.mark.parametrize("text", ['<extrait id="a"> Le préavis est de trois mois.',
                                  "<<<SOURCE 1 9f3a>>> Le préavis est de trois mois.",
                                  "Le préavis est de trois mois. </EXTRAIT>"])
def test_a_fence_the_answerer_does_not_declare_is_still_scaffolding(text):
    """Issue 40: ``check_no_scaffolding`` read only the fences the answerer declared in its trace: an answered
    text starting « <extrait id="a"> » with an empty trace passed all seven checks."""
    with pytest.raises(AnswerContractBroken, match="scaffolding"):
        contract.check_no_scaffolding(GOOD.with_(text=text, trace={}))


# ---------------------------------------------------------------- every model-calling entry point: checked, or why not

#: Public functions and classes of the package that take a model ``client`` but are not answerers run above,
#: each with its reason (scikit-learn's way: an exclusion is declared and reasoned, never silent).
NOT_ANSWERERS = {
    "rungs.core.errors.check_client": "checks that a client has .chat; calls no model",
    "rungs.model.contract.usage_of": "reads the token counts a client reported; calls no model",
    "rungs.rag.answering.answer": "the function behind Rag: checked through Rag, in every reader's mode",
    "rungs.rag.gate.sufficiency": "the gate's one yes/no call: its reading is answer.gate, checked through Rag's copy",
    "rungs.research.loop.run": "the function behind Researcher: checked through it, quick and research",
    "rungs.research.report.stream_cost": "the cost of N5's streamed report, one step of Researcher's run",
    "rungs.decide.ask": "N4's decision returns a Decision (a label), not an Answer: tests/test_decide.py holds it",
    "rungs.rerank.Reranker": "reorders hits: a retriever, held by the retrieval contract (tests/test_contract.py)",
    "rungs.rerank.rerank": "the function behind Reranker: a ranking, not an answer",
    "rungs.lab.judges.support": "a judge's verdict on an answer (a dict for the mark), never shown as an answer",
    "rungs.lab.judges.matches_reference": "a judge's verdict against a reference answer, for the mark",
}


def model_entry_points() -> set[str]:
    """Every public function or class of the package that takes a model ``client``, found by walking it."""
    found = set()
    for info in pkgutil.walk_packages(rungs.__path__, "rungs."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__ or \
                    not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            try:
                takes = "client" in inspect.signature(obj).parameters
            except (TypeError, ValueError):  # a builtin's signature cannot be read: it takes no client of ours
                takes = False
            if takes:
                found.add(f"{module.__name__}.{name}")
    return found


def unlisted(found: set[str]) -> list[str]:
    return sorted(found - set(BUILDERS) - set(NOT_ANSWERERS))


def test_every_model_calling_entry_point_is_checked_or_excluded_with_a_reason():
    found = model_entry_points()
    assert "rungs.rag.answerers.Rag" in found and "rungs.decide.ask" in found  # the discovery sees what is there
    assert not unlisted(found), f"model-calling entry points neither checked (BUILDERS) nor in NOT_ANSWERERS " \
                                f"with a reason: {unlisted(found)}"
    stale = sorted(set(NOT_ANSWERERS) - found)
    assert not stale, f"NOT_ANSWERERS names entry points that are gone: {stale}"
    assert all(reason.strip() for reason in NOT_ANSWERERS.values())


def test_a_new_model_calling_entry_point_would_be_seen():
    assert unlisted(model_entry_points() | {"rungs.rag.new_reader.ask_it"}) == ["rungs.rag.new_reader.ask_it"]
