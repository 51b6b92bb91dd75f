"""N4 — typed decisions: ask a model for a probability, a choice or a score, and refuse anything else.

What it is for: a judgement instead of prose. "Does this page answer the
question?" (``noul``: a probability of yes), "which section owns it?"
(``choice``: one key of a list, with a probability for every key), "how
relevant is it, 0–3?" (``score``: a number on an ordered scale). The answers
are data a program can use — here, to rerank retrieved pages — so they are
validated as strictly as any input.

Two backends, one contract:

- ``chat``: one fixed decision prompt, JSON only (the local server is also
  given a JSON schema), read by ``extract_answer_object`` and validated by
  ``conform``. Any issue — a missing id, an extra id, a choice not listed,
  probabilities that do not sum to 1, a score off the scale — goes back to the
  model once, with the rejected text and the list of issues (one repair round
  trip); if issues remain, ``DecisionInvalid`` lists them.
- ``logprobs``: no number is *written* by the model. One call per question,
  one token of answer; the probability is read from the first token's
  ``top_logprobs``: tokens that begin a candidate (« O » for « Oui »), a letter
  per option, a digit per level, renormalised over the candidates. The share of
  probability that fell on candidates is reported as ``coverage``; below
  ``min_coverage`` the result says it is not trusted instead of inventing a
  number.

Probability sums: a model writing 0.33 + 0.33 + 0.33 is not wrong, only
rounded. We allow a drift of up to 0.05, renormalise (the sum is then 1 to
within 1e-6), and note it; beyond that the sum is an issue to repair.

Cost: chat — one call for all questions (plus one for a repair); logprobs —
one short call per question. On the local model, a few seconds per call.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

from .core.errors import BadArgument, RungsError, short_repr, check_choice, check_client, check_int, check_number
from .grounding.answer import Cost
from .core.documents import duplicates
from .grounding.logprobs import YES_NO, distribution
from .grounding.replies import NoAnswerObject, extract_answer_object
from .model import TruncatedCompletion, default_client

TYPES = ("noul", "choice", "score")
DRIFT = 0.05
MAX_STATE_CHARS = 6000
#: The largest state budget a caller may set: past it, a « decision » is a document sent to a model.
MAX_STATE_BUDGET = 200_000
#: One token answers a logprob question: a letter per option (A…Z), a digit per level (0…9).
MAX_LOGPROB_OPTIONS, MAX_LOGPROB_LEVELS = 26, 10


class DecisionError(RungsError, RuntimeError):
    """A decision could not be obtained; the subclass says why."""


class DecisionInvalid(DecisionError):
    """The reply still breaks the contract after the one repair round trip; ``issues`` lists how."""

    def __init__(self, issues):
        self.issues = list(issues)
        super().__init__("the answers still fail after one repair: " + "; ".join(self.issues))


class DecisionBudgetExhausted(DecisionError):
    """The model spent its whole token budget without writing the answer object."""


@dataclass(frozen=True)
class Decision:
    """What N4 returns: the validated ``answers`` (question id → answer), the backend and model that gave
    them, their ``Cost`` (calls, prompt tokens evaluated and reused, tokens written, seconds), whether a
    repair round trip was needed, and every degradation in ``notes``."""

    answers: dict
    backend: str
    model: str | None
    cost: Cost
    repaired: bool = False
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        lines = [f"{qid}: {_said(answer)}" for qid, answer in self.answers.items()]
        return "\n".join(lines + [f"note: {n}" for n in self.notes] +
                         [f"{self.backend} backend{', repaired once' if self.repaired else ''} · {self.cost}"])

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython shows this, not the dataclass repr
        printer.text(str(self))


def _said(answer: dict) -> str:
    """One answer on one line, its numbers to 3 places: « noul p 0.845 », « choice conges (conges 0.700, …) »."""
    def fmt(v):
        return f"{v:.3f}" if isinstance(v, float) else (
            "{" + ", ".join(f"{k} {fmt(x)}" for k, x in v.items()) + "}" if isinstance(v, dict) else str(v))
    return " · ".join(f"{k} {fmt(v)}" for k, v in answer.items() if v is not None)


def _notes_of(result) -> list[str]:
    """A client's notes (every degradation, in words); a result of one's own without them has none."""
    notes = getattr(result, "notes", None)
    return [str(n) for n in notes] if isinstance(notes, (list, tuple)) else []


# ---------------------------------------------------------------- the questions

def check_questions(questions: dict) -> dict:
    """Refuse malformed questions before any call; return them with their option keys / levels made explicit."""
    if not isinstance(questions, dict) or not questions:
        raise BadArgument("questions must be a non-empty dict of id → question")
    out = {}
    for qid, q in questions.items():
        # The reply is a JSON object: its keys are text, so an id 1 would never find its answer "1".
        if not isinstance(qid, str) or not qid.strip():
            raise BadArgument(f"question id {short_repr(qid)} must be a non-empty string")
        if not isinstance(q, Mapping):
            raise BadArgument(f"question {qid!r} must be a dict with a type, instructions and criteria")
        kind = q.get("type")
        if kind not in TYPES:
            raise BadArgument(f"question {qid!r}: unknown type {short_repr(kind)} (use one of {', '.join(TYPES)})")
        if not isinstance(q.get("instructions"), str) or not q["instructions"].strip():
            raise BadArgument(f"question {qid!r}: instructions are empty (or not text)")
        criteria = q.get("criteria")
        if kind == "noul":
            if criteria is not None and not isinstance(criteria, dict):
                raise BadArgument(f"question {qid!r}: noul criteria are optional meanings {{'true': …, 'false': …}}")
            out[qid] = {**q, "criteria": criteria or {}}
        elif kind == "choice":
            if isinstance(criteria, dict):
                keys, rubric = list(criteria), dict(criteria)
            elif isinstance(criteria, (list, tuple)):
                keys, rubric = [str(k) for k in criteria], {str(k): None for k in criteria}
                if duplicates(keys):
                    raise BadArgument(f"question {qid!r}: duplicate option keys {duplicates(keys)}")
            else:
                raise BadArgument(f"question {qid!r}: choice criteria are option key → rubric (or a list of keys)")
            if not all(isinstance(k, str) and k.strip() for k in keys):
                raise BadArgument(f"question {qid!r}: option keys must be non-empty strings (the reply names them)")
            if len(keys) < 2:
                raise BadArgument(f"question {qid!r}: a choice needs at least two options")
            out[qid] = {**q, "criteria": rubric, "options": keys}
        else:
            if not isinstance(criteria, (list, tuple)) or len(criteria) < 2:
                raise BadArgument(f"question {qid!r}: score criteria are an ordered list of at least two levels")
            out[qid] = {**q, "criteria": list(criteria), "levels": list(criteria)}
    return out


def render_state(state) -> str:
    """The state as the model reads it: text as it is, anything else as indented JSON."""
    if isinstance(state, str):
        return state
    try:
        return json.dumps(state, ensure_ascii=False, indent=1)
    except (TypeError, ValueError, RecursionError) as err:  # an object, a cycle, nesting past the stack
        raise BadArgument(f"state must be text or JSON data (dicts, lists, strings, numbers), "
                          f"not {type(state).__name__} ({type(err).__name__}: {str(err)[:80]})") from None


# ---------------------------------------------------------------- the chat backend

SYSTEM = """Tu es un moteur de décision. Tu lis un ÉTAT puis des QUESTIONS, et tu réponds à chaque question, une fois chacune, dans un seul objet JSON dont les clés sont les identifiants des questions. Rien d'autre que cet objet.
Formes des réponses :
- noul : un nombre entre 0 et 1, la probabilité que la réponse soit oui.
- choice : {"choice": "<une des clés proposées>", "probs": {"<clé>": probabilité, … pour chaque clé, somme 1}, "confidence": nombre entre 0 et 1 (facultatif)}
- score : {"score": nombre entre 0 et le dernier niveau, "probs": {"0": probabilité, "1": …, pour chaque niveau, somme 1}, "confidence": nombre entre 0 et 1 (facultatif)}"""


def _block(qid, q) -> str:
    lines = [f"[{qid}] type: {q['type']}", f"consigne : {q['instructions']}"]
    if q["type"] == "noul":
        for side in ("true", "false"):
            if q["criteria"].get(side):
                lines.append(f"{'oui' if side == 'true' else 'non'} signifie : {q['criteria'][side]}")
    elif q["type"] == "choice":
        for key in q["options"]:
            lines.append(f"- {key}" + (f" : {q['criteria'][key]}" if q["criteria"][key] else ""))
    else:
        for i, level in enumerate(q["levels"]):
            lines.append(f"- {i} : {level}")
    return "\n".join(lines)


def decision_messages(state, questions: dict) -> list[dict]:
    """The fixed decision prompt: the system's rules, then STATE, then each question in its own block."""
    questions = check_questions(questions)
    user = "ÉTAT :\n" + render_state(state) + "\n\nQUESTIONS :\n\n" + "\n\n".join(_block(i, q) for i, q in questions.items())
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def answer_schema(questions: dict) -> dict:
    """A JSON schema of the answer object (the local server enforces its shape; ``conform`` checks the rest)."""
    questions = check_questions(questions)
    props = {}
    for qid, q in questions.items():
        if q["type"] == "noul":
            props[qid] = {"type": "number"}
        else:
            keys = q["options"] if q["type"] == "choice" else [str(i) for i in range(len(q["levels"]))]
            head = {"choice": {"enum": keys}} if q["type"] == "choice" else {"score": {"type": "number"}}
            props[qid] = {"type": "object", "properties": {
                **head, "probs": {"type": "object", "properties": {k: {"type": "number"} for k in keys}, "required": keys}},
                "required": [*head, "probs"]}
    return {"type": "object", "properties": props, "required": list(props)}


def _number(value):
    # True is 1 in Python: a boolean is not a probability. An integer is finite however long (and has no float).
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)


def _probs(qid, raw, keys, issues, notes):
    if not isinstance(raw, dict):
        issues.append(f"{qid}: probs must be an object with a probability for each of {keys}")
        return None
    missing, extra = [k for k in keys if k not in raw], [k for k in raw if k not in keys]
    if missing or extra:
        issues.append(f"{qid}: probs must cover exactly {keys}" + (f", missing {missing}" if missing else "")
                      + (f", unknown {extra}" if extra else ""))
        return None
    if not all(_number(raw[k]) and 0 <= raw[k] <= 1 for k in keys):
        issues.append(f"{qid}: every probability must be a number in [0, 1]")
        return None
    total = sum(raw[k] for k in keys)
    if abs(total - 1) > DRIFT:
        issues.append(f"{qid}: probabilities sum to {total:.3f}, not 1")
        return None
    if abs(total - 1) > 1e-9:
        notes.append(f"{qid}: probabilities summed to {total:.3f}; renormalised")
    return {k: raw[k] / total for k in keys}


def _contradicts(qid, choice, probs: dict[str, float], issues) -> bool:
    """A choice must be the option its own probabilities favour (a tie is the model's to break)."""
    best = max(probs, key=probs.get)
    if probs[choice] < probs[best] - 1e-9:
        issues.append(f"{qid}: choice {choice!r} has probability {probs[choice]:.2f} but {best!r} has "
                      f"{probs[best]:.2f}: the choice must be the most probable option")
        return True
    return False


def _score_contradicts(qid, score, probs: dict[str, float], issues) -> bool:
    """A written score must lie within one level of the mean level its own probabilities give."""
    expected = _expected(probs)
    if abs(score - expected) > 1 + 1e-9:
        issues.append(f"{qid}: score {score:g} but its probabilities put the mean level at {expected:.2f}: "
                      "the score must be within one level of what its probabilities say")
        return True
    return False


def _expected(probs: dict[str, float]) -> float:
    """The mean level of a distribution over levels "0", "1", …"""
    return sum(int(level) * p for level, p in probs.items())


def _confidence(qid, raw, issues):
    if "confidence" not in raw:
        return None
    if not (_number(raw["confidence"]) and 0 <= raw["confidence"] <= 1):
        issues.append(f"{qid}: confidence must be a number in [0, 1], got {short_repr(raw['confidence'])}")
    return raw["confidence"]


def conform(raw, questions: dict) -> tuple[dict, list[str]]:
    """Validate a reply object against the questions: ``(answers, issues)``; answers only if issues is empty."""
    questions = check_questions(questions)
    if not isinstance(raw, dict):
        return {}, [f"the reply must be a JSON object keyed by question id, not a {type(raw).__name__}"]
    issues, notes, answers = [], [], {}
    for qid in raw:
        if qid not in questions:
            issues.append(f"{qid}: not a question that was asked")
    for qid, q in questions.items():
        if qid not in raw:
            issues.append(f"{qid}: missing")
            continue
        value = raw[qid]
        if q["type"] == "noul":
            if isinstance(value, dict) and "p" in value:
                value = value["p"]  # a common, harmless wrapping
            if not (_number(value) and 0 <= value <= 1):
                issues.append(f"{qid}: a noul answer is a number in [0, 1], got {short_repr(value)}")
            else:
                answers[qid] = {"type": "noul", "p": float(value)}
            continue
        if not isinstance(value, dict):
            issues.append(f"{qid}: a {q['type']} answer is an object, got {short_repr(value)}")
            continue
        if q["type"] == "choice":
            keys = q["options"]
            if value.get("choice") not in keys:
                issues.append(f"{qid}: choice {short_repr(value.get('choice'))} is not one of {keys}")
            probs = _probs(qid, value.get("probs"), keys, issues, notes)
            confidence = _confidence(qid, value, issues)
            if probs is not None and value.get("choice") in keys and _contradicts(qid, value["choice"], probs, issues):
                continue
            if probs is not None and value.get("choice") in keys:
                answers[qid] = {"type": "choice", "choice": value["choice"], "probs": probs, "confidence": confidence}
        else:
            top = len(q["levels"]) - 1
            score = value.get("score")
            if not (_number(score) and 0 <= score <= top):
                issues.append(f"{qid}: score must be a number in [0, {top}], got {short_repr(score)}")
            keys = [str(i) for i in range(top + 1)]
            probs = _probs(qid, value.get("probs"), keys, issues, notes)
            confidence = _confidence(qid, value, issues)
            if probs is not None and _number(score) and 0 <= score <= top and \
                    not _score_contradicts(qid, score, probs, issues):
                answers[qid] = {"type": "score", "score": float(score), "probs": probs, "confidence": confidence,
                                "expected": _expected(probs)}
    if issues:
        # A reply with 10,000 unknown keys gets 20 issues and a count: the repair prompt stays a prompt.
        return {}, issues[:20] + ([f"… and {len(issues) - 20} more issues"] if len(issues) > 20 else [])
    if notes:
        answers["_notes"] = notes
    return answers, []


def _ask_chat(state, questions, client, max_tokens):
    messages = decision_messages(state, questions)
    schema = answer_schema(questions)
    cost, repaired, notes = Cost(), False, []
    for round_trip in range(2):  # the first answer, then at most one repair
        started = time.perf_counter()
        try:
            result = client.chat(messages, json_schema=schema, max_tokens=max_tokens)
        except TruncatedCompletion:
            raise DecisionBudgetExhausted(f"the model spent its whole budget of {max_tokens} tokens without "
                                          "writing the answer object: raise max_tokens or ask fewer questions") from None
        cost += Cost.of_call(result, time.perf_counter() - started)  # a client's numbers checked, never summed blind
        notes += _notes_of(result)
        try:
            raw = extract_answer_object(result.text)
            answers, issues = conform(raw, questions)
        except NoAnswerObject as err:
            if result.finish_reason == "length":
                raise DecisionBudgetExhausted(
                    f"the model spent its whole budget of {max_tokens} tokens ({result.output_tokens} used) "
                    "without finishing the answer object: raise max_tokens or ask fewer questions") from None
            answers, issues = {}, [str(err)]
        if not issues:
            notes += answers.pop("_notes", [])
            return Decision(answers, "chat", getattr(result, "model", None), cost, repaired, tuple(notes))
        if round_trip == 1:
            raise DecisionInvalid(issues)
        # One repair round trip: the rejected text and what is wrong with it go back to the model.
        repaired = True
        messages = messages + [{"role": "assistant", "content": result.text},
                               {"role": "user", "content": "Ta réponse ne respecte pas le contrat :\n- "
                                + "\n- ".join(issues) + "\nRéponds de nouveau avec un seul objet JSON corrigé."}]


# ---------------------------------------------------------------- the logprob backend

def candidates(q) -> dict[str, list[str]]:
    """Each answer and the words that may begin it (the first token must be a prefix of one of them)."""
    if q["type"] == "noul":
        return dict(YES_NO)
    if q["type"] == "choice":
        return {key: [chr(ord("A") + i)] for i, key in enumerate(q["options"])}
    return {str(i): [str(i)] for i in range(len(q["levels"]))}


def logprob_prompt(state, qid, q) -> list[dict]:
    """One question, answered by one token: « Oui »/« Non », an option letter, or a level digit."""
    if q["type"] == "noul":
        how, extra = "Réponds uniquement par Oui ou par Non.", ""
        for side in ("true", "false"):
            if q["criteria"].get(side):
                extra += f"\n{'Oui' if side == 'true' else 'Non'} signifie : {q['criteria'][side]}"
    elif q["type"] == "choice":
        how = "Réponds uniquement par la lettre de l'option."
        extra = "".join(f"\n{chr(ord('A') + i)}. {key}" + (f" : {q['criteria'][key]}" if q["criteria"][key] else "")
                        for i, key in enumerate(q["options"]))
    else:
        how = f"Réponds uniquement par un chiffre de 0 à {len(q['levels']) - 1}."
        extra = "".join(f"\n{i} : {level}" for i, level in enumerate(q["levels"]))
    return [{"role": "user", "content": f"{q['instructions']}{extra}\n\n{render_state(state)}\n\n{how}"}]


def _ask_logprobs(state, questions, client, min_coverage, top_logprobs):
    answers, cost, notes, model = {}, Cost(), [], None
    for qid, q in questions.items():
        started = time.perf_counter()
        result = client.chat(logprob_prompt(state, qid, q), max_tokens=1, logprobs=top_logprobs)
        cost += Cost.of_call(result, time.perf_counter() - started)
        model = getattr(result, "model", None)
        notes += _notes_of(result)
        if not result.logprobs:
            raise DecisionError("the endpoint returned no logprobs: use backend='chat' with this model")
        try:
            probs, coverage = distribution(result.logprobs[0]["top"], candidates(q))
        except (BadArgument, KeyError, TypeError, IndexError) as err:  # the endpoint's numbers, not the caller's
            raise DecisionError(f"the endpoint returned logprobs that cannot be read as probabilities "
                                f"({type(err).__name__}: {str(err)[:120]}): use backend='chat'") from None
        answer = {"type": q["type"], "coverage": coverage, "trusted": coverage >= min_coverage}
        if not answer["trusted"]:
            answer["note"] = (f"only {coverage:.0%} of the first token's probability fell on the candidates "
                              f"(threshold {min_coverage:.0%}): no number reported")
            notes.append(f"{qid}: {answer['note']}")
        elif q["type"] == "noul":
            answer["p"] = probs["true"]
        elif q["type"] == "choice":
            answer["probs"] = probs
            answer["choice"] = max(q["options"], key=lambda k: (probs[k], -q["options"].index(k)))
        else:
            answer["probs"] = probs
            answer["expected"] = _expected(probs)
            answer["score"] = answer["expected"]
        answers[qid] = answer
    return Decision(answers, "logprobs", model, cost, False, tuple(notes))


def ask(state, questions: dict, client=None, *, backend: str = "chat", max_tokens: int = 400,
        max_state_chars: int = MAX_STATE_CHARS, min_coverage: float = 0.5, top_logprobs: int = 10) -> "Decision":
    """Ask typed questions about ``state``: a ``Decision`` (``answers`` by question id, and what they cost)."""
    # Every knob checked once, here, before any call: a NaN budget must not mean « no budget ».
    questions = check_questions(questions)
    check_choice(backend, "backend", ("chat", "logprobs"))
    check_int(max_tokens, "max_tokens", low=1, high=100_000)
    check_int(max_state_chars, "max_state_chars", low=1, high=MAX_STATE_BUDGET)
    min_coverage = check_number(min_coverage, "min_coverage", low=0.0, high=1.0)
    check_int(top_logprobs, "top_logprobs", low=1, high=20)  # OpenAI's API returns at most 20
    if backend == "logprobs":
        for qid, q in questions.items():
            if len(q.get("options", ())) > MAX_LOGPROB_OPTIONS or len(q.get("levels", ())) > MAX_LOGPROB_LEVELS:
                raise BadArgument(f"question {qid!r}: the logprobs backend reads one token, so at most "
                                  f"{MAX_LOGPROB_OPTIONS} options (A–Z) or {MAX_LOGPROB_LEVELS} levels (0–9); "
                                  "use backend='chat'")
    rendered = render_state(state)
    if len(rendered) > max_state_chars:
        raise BadArgument(f"the state has {len(rendered)} characters; the budget is {max_state_chars}: "
                          "send a shorter passage or raise max_state_chars")
    client = check_client(client) if client is not None else default_client()
    if backend == "chat":
        return _ask_chat(state, questions, client, max_tokens)
    return _ask_logprobs(state, questions, client, min_coverage, top_logprobs)
