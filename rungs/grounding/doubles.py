"""The answer contract's doubles: a model that behaves every way a model can, and answerers planted broken.

What it is for: ``rungs.grounding.contract.check_answerer`` drives an answerer
with these, and the suite runs them over every answerer of the package; a
learner can hold their own answerer to the contract with them in one call.
Not a model and never a default: test doubles, in the package so that the
driver and its doubles travel together (as PyTerrier ships its test case).

``Behaving(behaviour)`` looks at what it is asked — the JSON schema (a free
answer's ``sources``, a quoted answer's ``quotes``, a pointing reply's
``phrases``, a lead-in's ``reponse``, a plan, a decision), a request for
logprobs (a yes/no), or a streamed report with numbered sources — and replies
in that shape, the way the behaviour says:

- ``faithful``: a sentence copied from the first passage or source sent, cited;
- ``abstains``: « je ne sais pas », in the shape asked;
- ``forges``: cites an id, a sentence or a source number that was never sent;
- ``invents_figure``: a cited answer holding « 987 jours », which nothing holds;
- ``echoes_fence``: the passage's fence itself (« <extrait id=… », « <<<SOURCE 1 … »);
- ``garbage``: prose where JSON is asked; ``empty``: nothing;
- ``down``: the model is unreachable (``ModelUnavailable``);
- ``bad_counts``: a faithful reply whose token counts are not counts (« abc »).

The planted answerers (``PLANTED``) break one promise each, whatever the model
does — forging a citation, inventing a figure, echoing the fence, failing with
a raw exception — and the contract run must refuse each, naming the breach.
Taught in notebook 03 (the contract).

Cost: nothing; no model, no file.
"""

from __future__ import annotations

import json
import re

from ..core.errors import BadArgument
from ..model import ChatModel, ChatResult, EmptyCompletion, ModelUnavailable, estimate_tokens
from .answer import Answer, Cost, FigureCheck, Quote, Status
from .answerer import Answerer

BEHAVIOURS = ("faithful", "abstains", "forges", "invents_figure", "echoes_fence", "garbage", "empty", "down",
              "bad_counts")


def _prompt(messages) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)


def _first_sentence(prompt: str) -> tuple[str | None, str]:
    """The first passage's id and its first sentence, as the prompt shows them (fenced extract or source); a
    heading over a blank line is not a sentence (a quote is the sentence that answers, at least a few words)."""
    m = re.search(r'<extrait id="([^"]*)"[^>]*>\n(?:[^\n\[][^\n]*\n\n)?(?:\[(\d+)\] )?([^\n]+)', prompt)
    if m:
        return m.group(1), re.split(r"(?<=[.!?])\s", m.group(3))[0]
    m = re.search(r"<<<SOURCE (\d+) \w+>>>\n([^\n]+)", prompt)
    if m:
        return m.group(1), re.split(r"(?<=[.!?])\s", m.group(2))[0]
    return None, "Rien."


def _fill(schema: dict):
    """A minimal object of a schema's shape (plans, decisions, follow-ups): what a model might write."""
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {k: _fill(v) for k, v in schema.get("properties", {}).items()}
    return {"array": [], "string": "congés", "boolean": False, "number": 0.5, "integer": 1}.get(kind)


class Behaving(ChatModel):
    """Replies to every request in the shape it asks for, the way ``behaviour`` says (see the module)."""

    model = "behaving (test double)"
    local = False

    def __init__(self, behaviour: str):
        if behaviour not in BEHAVIOURS:
            raise BadArgument(f"a Behaving double behaves one of {', '.join(BEHAVIOURS)}, not {behaviour!r}")
        self.behaviour = behaviour
        self.calls: list[dict] = []
        self.last_usage = (0, 0)

    def _text(self, messages, schema, logprobs) -> str:
        b, prompt = self.behaviour, _prompt(messages)
        if b == "down":
            raise ModelUnavailable("the test double is unreachable, on purpose")
        if b == "empty":
            return ""
        if b == "garbage":
            return "Voici ma réponse, sans JSON."
        pid, sentence = _first_sentence(prompt)
        if b == "echoes_fence":
            sentence = prompt[prompt.find("<"):][:200] or sentence
        if b == "invents_figure":
            sentence = "Il faut 987 jours."
        props = (schema or {}).get("properties", {})
        if "phrases" in props:
            numbers = props["phrases"].get("anyOf", [props["phrases"]])[0]["items"]["enum"]
            chosen = "aucune" if b == "abstains" else [10_000] if b == "forges" else numbers[:1]
            lead = {"reponse": "Je ne sais pas." if b == "abstains" else sentence[:40]} if "reponse" in props else {}
            return _json({**lead, "phrases": chosen})
        if "sources" in props or "quotes" in props:
            ids = (props.get("sources") or props["quotes"]["items"]["properties"]["source"])
            ids = ids.get("items", ids).get("enum", [pid])
            cited = [] if b == "abstains" else ["jamais-envoye"] if b == "forges" else ids[:1]
            said = "Je ne sais pas." if b == "abstains" else sentence
            if "quotes" in props:
                return _json({"answer": said, "quotes": [{"source": c, "text": sentence} for c in cited]})
            return _json({"answer": said, "sources": cited})
        if schema:
            return _json(_fill(schema))
        if b == "abstains":
            return "Je ne sais pas."
        return f"{sentence} [{99 if b == 'forges' else pid or 1}]"

    def chat(self, messages, *, temperature=0.0, max_tokens=512, json_schema=None, logprobs=0, seed=0):
        self.calls.append({"messages": messages, "json_schema": json_schema, "logprobs": logprobs})
        if logprobs:
            if self.behaviour == "down":
                raise ModelUnavailable("the test double is unreachable, on purpose")
            yes = self.behaviour != "abstains"
            top = {"Oui": -0.05, "Non": -3.05} if yes else {"Oui": -3.05, "Non": -0.05}  # one distribution: sums below 1
            return ChatResult(text="Oui" if yes else "Non", model=self.model, input_tokens=estimate_tokens(messages),
                              output_tokens=1, finish_reason="length", latency=0.0,
                              logprobs=[{"token": "Oui" if yes else "Non", "logprob": -0.05, "top": top}])
        text = self._text(messages, json_schema, logprobs)
        counts = "abc" if self.behaviour == "bad_counts" else estimate_tokens(messages)
        if not text:
            raise EmptyCompletion("the test double wrote nothing, on purpose")
        return ChatResult(text=text, model=self.model, input_tokens=counts, output_tokens=len(text) // 4,
                          finish_reason="stop", latency=0.0)

    def stream(self, messages, *, temperature=0.0, max_tokens=512, seed=0, json_schema=None):
        self.calls.append({"messages": messages, "json_schema": json_schema, "stream": True})
        text = self._text(messages, json_schema, 0)
        for i in range(0, len(text), 5):
            yield text[i:i + 5]
        self.last_usage = ("abc" if self.behaviour == "bad_counts" else estimate_tokens(messages), len(text) // 4)


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------- answerers planted broken, one promise each

_SENT = {"a": "Le préavis est de trois mois."}


def _shown(question: str, text: str, **fields) -> Answer:
    """An answered answer over one passage, one call, as a reader would build it but for what ``text`` says."""
    return Answer(question=question, status=Status.ANSWERED, text=text, sent=_SENT, cost=Cost(1, 10, 0, 5, 0.1),
                  **{"cited": ("a",), "quotes": (Quote("a", _SENT["a"]),), "figures": (FigureCheck("3 mois", ("a",)),),
                     **fields})


class Forges(Answerer):
    """Cites a passage that was never sent."""

    name = "planted: forges a citation"

    def __init__(self, client=None):
        self.client = client

    def _ask(self, question):
        return _shown(question, _SENT["a"], cited=("a", "jamais-envoye"))


class Invents(Forges):
    """Shows a figure that nothing it cites holds, and lists it as held."""

    name = "planted: invents a figure"

    def _ask(self, question):
        return _shown(question, "Le préavis est de 987 jours.", figures=(FigureCheck("987 jours", ("a",)),))


class Echoes(Forges):
    """Shows the passage's fence, declaring none (the contract finds it in the text)."""

    name = "planted: echoes the fence"

    def _ask(self, question):
        return _shown(question, '<EXTRAIT id="a"> ' + _SENT["a"])


class Fails(Forges):
    """Fails with a raw exception (a bug of its own) instead of saying what became of the question."""

    name = "planted: fails with a raw exception"

    def _ask(self, question):
        return {}["the reply"]  # a KeyError, as a reader's own bug would raise it


#: Each planted answerer → the breach the contract run must name (a check's name, or the raw exception).
PLANTED = {Forges: "check_cited_were_sent", Invents: "check_figures_supported", Echoes: "check_no_scaffolding",
           Fails: "raised KeyError"}
