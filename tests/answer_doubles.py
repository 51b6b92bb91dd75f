"""A model double for the answer contract: it reads each request and answers it in one chosen way.

Not a model and never a default: a test double. ``Behaving(behaviour)`` looks at
what it is asked — the JSON schema (a free answer's ``sources``, a quoted
answer's ``quotes``, a pointing reply's ``phrases``, a lead-in's ``reponse``, a
plan, a decision), a request for logprobs (a yes/no), or a streamed report with
numbered sources — and replies in that shape, the way the behaviour says:

- ``faithful``: a sentence copied from the first passage or source sent, cited;
- ``abstains``: « je ne sais pas », in the shape asked;
- ``forges``: cites an id, a sentence or a source number that was never sent;
- ``invents_figure``: a cited answer holding « 987 jours », which nothing holds;
- ``echoes_fence``: the passage's fence itself (« <extrait id=… », « <<<SOURCE 1 … »);
- ``garbage``: prose where JSON is asked; ``empty``: nothing;
- ``down``: the model is unreachable (``ModelUnavailable``);
- ``bad_counts``: a faithful reply whose token counts are not counts (« abc »).

Whatever the behaviour, every answerer's answer must keep the contract.
"""

from __future__ import annotations

import re

from rungs.model import ChatModel, ChatResult, ModelUnavailable, estimate_tokens

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
        assert behaviour in BEHAVIOURS, behaviour
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
            from rungs.model import EmptyCompletion
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
    import json

    return json.dumps(value, ensure_ascii=False)
