"""What N3 asks the model, mode by mode: the prompts, the no-answer rule, and the one repair message.

What it is for: the rung's words live here, apart from its logic, so a reader
can read — and change — what is asked without reading the checks. A prompt is
a knob like k1: notebook 03 and ``benchmarks/bench_answers.py`` measure them.
Each template has the places ``{passages}``, ``{question}``, ``{no_answer}``
and, optionally, ``{collection}`` (what the extracts come from: « de documents »
unless the caller says, so a reader's own folder is never called a handbook);
braces of its own are doubled.

Every template has the same start — « Voici des extraits {collection} », the
extracts, the question — and only then the instructions: the server reuses the
start of the previous prompt from its cache, so turning the instructions, or
asking the gate's question and then the answer's, costs only the new end.

Cost: nothing.
"""

from __future__ import annotations

import html

from ..core.errors import BadArgument, short_repr
from ..grounding.claims import MIN_QUOTE_WORDS
from .readers import reader

#: What the extracts are, said in the prompt when the caller does not say it (a folder of one's own).
COLLECTION = "de documents"
#: The handbook, as the notebooks name it.
HANDBOOK = "du livret d'accueil de l'entreprise"

#: The shared start: the extracts, then the question. Every mode's template begins with exactly this.
_HEAD = "Voici des extraits {collection}.\n\n{passages}\n\nQuestion : {question}\n\n"
_HEAD_NUMBERED = ("Voici des extraits {collection}, chaque phrase précédée de son numéro entre crochets.\n\n"
                  "{passages}\n\nQuestion : {question}\n\n")

PROMPT = _HEAD + """Réponds à la question à partir de ces extraits, et de rien d'autre, en français, en une ou deux phrases, avec uniquement un objet JSON de la forme :
{{"answer": "ta réponse", "sources": ["id d'un extrait utilisé", ...]}}
Cite dans "sources" l'id de chaque extrait qui justifie ta réponse.{no_answer}"""

#: The same task, rewritten: the instructions as a list, asking for the figure as the extract writes it.
#: A prompt is a knob like k1: notebook 03 and benchmarks/bench_answers.py compare the two.
PROMPT_REWRITTEN = _HEAD + """Consignes :
- Réponds uniquement à partir des extraits, en une phrase courte, en français.
- Recopie les chiffres exactement comme l'extrait les écrit, avec leur unité (jours, heures, euros…).
- Mets dans "sources" l'id de l'extrait d'où vient ta réponse.{no_answer}
Réponds avec un seul objet JSON : {{"answer": "…", "sources": ["…"]}}"""

#: The free answer with its quotes: for each cited extract, the words the answer rests on, copied.
PROMPT_QUOTED = _HEAD + """Réponds à la question à partir de ces extraits, et de rien d'autre, en français, en une ou deux phrases, avec uniquement un objet JSON de la forme :
{{"answer": "ta réponse", "quotes": [{{"source": "id de l'extrait", "text": "la phrase de l'extrait qui justifie ta réponse"}}]}}
Pour chaque extrait qui justifie ta réponse, recopie dans "quotes" la phrase qui la justifie, mot pour mot.{no_answer}"""

#: Pointing: the model writes only the numbers of the sentences that answer.
PROMPT_POINTING = _HEAD_NUMBERED + """Donne les numéros des phrases qui répondent à la question : une phrase si elle suffit, trois au plus.{no_answer}
Réponds uniquement avec un objet JSON : {{"phrases": [numéros]}}{or_none}"""

#: Pointing with a lead-in: a few words first (« Non. », « 12 jours. »), then the sentences that say it.
PROMPT_POINTING_LEAD = _HEAD_NUMBERED + """Réponds d'abord en quelques mots, dans "reponse", puis donne dans "phrases" les numéros des phrases qui le disent : une phrase si elle suffit, trois au plus.{no_answer}
Réponds uniquement avec un objet JSON : {{"reponse": "quelques mots", "phrases": [numéros]}}{or_none}"""

#: The sufficient-context gate (``rungs.rag.gate``): the answer's own start, then one yes/no question.
_GATE = "Ces extraits permettent-ils de répondre à la question ? Réponds uniquement par Oui ou par Non."
GATE_PROMPT = _HEAD + _GATE
GATE_PROMPT_NUMBERED = _HEAD_NUMBERED + _GATE

NO_ANSWER_RULE = ('\nSi les extraits ne permettent pas de répondre, réponds exactement '
                  '{"answer": "Je ne sais pas.", "sources": []}.')
#: The same rule, in the shape of each mode's reply.
NO_ANSWER_RULES = {"free": NO_ANSWER_RULE,
                   "quoted": ('\nSi les extraits ne permettent pas de répondre, réponds exactement '
                              '{"answer": "Je ne sais pas.", "quotes": []}.'),
                   "pointing": ("\nSi aucune phrase ne répond à la question, réponds exactement "
                                '{"phrases": "aucune"}.'),
                   "pointing-lead": ("\nSi aucune phrase ne répond à la question, réponds exactement "
                                     '{"reponse": "Je ne sais pas.", "phrases": "aucune"}.')}
#: With the no-answer rule, the pointing modes' last line names « aucune » as a reply too ({or_none}); without it,
#: the schema offers no « aucune » and the prompt does not mention it: only the gate can decline.
OR_NONE = {"pointing": ' ou {"phrases": "aucune"}', "pointing-lead": ' ou {"reponse": "…", "phrases": "aucune"}'}
PROMPTS = {"free": PROMPT, "quoted": PROMPT_QUOTED, "pointing": PROMPT_POINTING, "pointing-lead": PROMPT_POINTING_LEAD}


#: A fault's kinds, as ``rungs.grounding.claims.faults`` writes them.
FAULT_KINDS = ("quote", "figure")


def check_faults(faults) -> list[dict]:
    """Faults as ``rungs.grounding.claims.faults`` writes them — a list of ``{"kind", "what", "source", "reason"}``
    — or ``BadArgument`` naming the first that is not (a KeyError from the middle of a repair helps nobody)."""
    if isinstance(faults, (str, bytes, dict)) or not isinstance(faults, (list, tuple)):
        raise BadArgument(f"faults must be a list of faults (rungs.grounding.claims.faults), "
                          f"not {type(faults).__name__} {short_repr(faults)}")
    for i, f in enumerate(faults):
        if not isinstance(f, dict):
            raise BadArgument(f"fault {i} must be a dict with kind, what, source and reason, not {short_repr(f)}")
        wrong = [key for key, ok in (("kind", f.get("kind") in FAULT_KINDS), ("what", isinstance(f.get("what"), str)),
                                     ("reason", isinstance(f.get("reason"), str)),
                                     ("source", isinstance(f.get("source"), str) or
                                      (f.get("kind") == "figure" and f.get("source") is None)),
                                     ("short", isinstance(f.get("short", False), bool))) if not ok]
        if wrong:
            raise BadArgument(f"fault {i} has no usable {wrong[0]!r} (kind one of {', '.join(FAULT_KINDS)}; what, "
                              f"reason and a quote's source as text): {short_repr(f)}")
    return list(faults)


def repair_message(faults: list[dict], mode: str) -> str:
    """The one repair round trip: what was not found, in the model's language, and what to do instead."""
    empty = reader(mode, model=True).empty
    said = []
    for f in check_faults(faults):
        if f.get("short"):
            said.append(f"la citation « {f['what'][:200]} » est trop courte pour montrer sur quoi la réponse "
                        f"repose : recopie au moins {MIN_QUOTE_WORDS} mots de l'extrait « {f['source']} »")
        elif f["kind"] == "quote" and f["what"]:
            said.append(f"la citation « {f['what'][:200]} » n'est pas dans l'extrait « {f['source']} »")
        elif f["kind"] == "quote":
            said.append(f"l'extrait « {f['source']} » est cité sans citation")
        else:
            said.append(f"le chiffre « {f['what']} » n'est dans aucun extrait cité")
    return ("Ta réponse ne peut pas être montrée : " + " ; ".join(said) + ". Corrige-la : recopie mot pour mot "
            "les phrases des extraits, n'écris que des chiffres qui y sont, ou réponds exactement " + empty +
            ". Réponds uniquement avec l'objet JSON.")


def attribute(value) -> str:
    """A value as an XML attribute: every character that could close it written as an entity."""
    return html.escape(str(value), quote=True)


def content(text: str) -> str:
    """A passage's text inside its fence: only the angle brackets (« Boréal & Moi » stays readable, and no
    tag can be written without them)."""
    return text.replace("<", "&lt;").replace(">", "&gt;")
