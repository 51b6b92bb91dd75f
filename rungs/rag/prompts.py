"""What N3 asks the model, mode by mode: the prompts, the no-answer rule, and the one repair message.

What it is for: the rung's words live here, apart from its logic (``rungs.rag``),
so a reader can read — and change — what is asked without reading the checks.
A prompt is a knob like k1: notebook 03 and ``benchmarks/bench_answers.py``
measure them. Each template has the places ``{passages}``, ``{question}`` and
``{no_answer}``; braces of its own are doubled.

Cost: nothing.
"""

from __future__ import annotations

import html

PROMPT = """Tu réponds aux questions des salariés à partir des extraits du livret d'accueil ci-dessous, et de rien d'autre.

{passages}

Question : {question}

Réponds en français, en une ou deux phrases, avec uniquement un objet JSON de la forme :
{{"answer": "ta réponse", "sources": ["id d'un extrait utilisé", ...]}}
Cite dans "sources" l'id de chaque extrait qui justifie ta réponse.{no_answer}"""

#: The same task, rewritten: the instructions after the question, as a list, asking for the figure as the
#: extract writes it. A prompt is a knob like k1: notebook 03 and benchmarks/bench_answers.py compare the two.
PROMPT_REWRITTEN = """Voici des extraits du livret d'accueil d'une entreprise.

{passages}

Question d'un salarié : {question}

Consignes :
- Réponds uniquement à partir des extraits, en une phrase courte, en français.
- Recopie les chiffres exactement comme l'extrait les écrit, avec leur unité (jours, heures, euros…).
- Mets dans "sources" l'id de l'extrait d'où vient ta réponse.{no_answer}
Réponds avec un seul objet JSON : {{"answer": "…", "sources": ["…"]}}"""

#: The free answer with its quotes: for each cited extract, the words the answer rests on, copied.
PROMPT_QUOTED = """Tu réponds aux questions des salariés à partir des extraits du livret d'accueil ci-dessous, et de rien d'autre.

{passages}

Question : {question}

Réponds en français, en une ou deux phrases, avec uniquement un objet JSON de la forme :
{{"answer": "ta réponse", "quotes": [{{"source": "id de l'extrait", "text": "la phrase de l'extrait qui justifie ta réponse"}}]}}
Pour chaque extrait qui justifie ta réponse, recopie dans "quotes" la phrase qui la justifie, mot pour mot.{no_answer}"""

#: Pointing: the model writes only the numbers of the sentences that answer.
PROMPT_POINTING = """Tu aides les salariés à trouver, dans les extraits du livret d'accueil ci-dessous, les phrases qui répondent à leur question. Chaque phrase est précédée de son numéro entre crochets.

{passages}

Question : {question}

Donne les numéros des phrases qui répondent à la question : une phrase si elle suffit, trois au plus.{no_answer}
Réponds uniquement avec un objet JSON : {{"phrases": [numéros]}}"""

#: Pointing with a lead-in: a few words first (« Non. », « 12 jours. »), then the sentences that say it.
PROMPT_POINTING_LEAD = """Tu aides les salariés à trouver, dans les extraits du livret d'accueil ci-dessous, les phrases qui répondent à leur question. Chaque phrase est précédée de son numéro entre crochets.

{passages}

Question : {question}

Réponds d'abord en quelques mots, dans "reponse", puis donne dans "phrases" les numéros des phrases qui le disent : une phrase si elle suffit, trois au plus.{no_answer}
Réponds uniquement avec un objet JSON : {{"reponse": "quelques mots", "phrases": [numéros]}}"""

NO_ANSWER_RULE = ('\nSi les extraits ne permettent pas de répondre, réponds exactement '
                  '{"answer": "Je ne sais pas.", "sources": []}.')
#: The same rule, in the shape of each mode's reply.
NO_ANSWER_RULES = {"free": NO_ANSWER_RULE,
                   "quoted": ('\nSi les extraits ne permettent pas de répondre, réponds exactement '
                              '{"answer": "Je ne sais pas.", "quotes": []}.'),
                   "pointing": ("\nSi aucune phrase ne répond à la question, réponds exactement "
                                '{"phrases": []}.'),
                   "pointing-lead": ("\nSi aucune phrase ne répond à la question, réponds exactement "
                                     '{"reponse": "Je ne sais pas.", "phrases": []}.')}
PROMPTS = {"free": PROMPT, "quoted": PROMPT_QUOTED, "pointing": PROMPT_POINTING, "pointing-lead": PROMPT_POINTING_LEAD}


def repair_message(faults: list[dict], mode: str) -> str:
    """The one repair round trip: what was not found, in the model's language, and what to do instead."""
    said = []
    for f in faults:
        if f["kind"] == "quote" and f["what"]:
            said.append(f"la citation « {f['what'][:200]} » n'est pas dans l'extrait « {f['source']} »")
        elif f["kind"] == "quote":
            said.append(f"l'extrait « {f['source']} » est cité sans citation")
        else:
            said.append(f"le chiffre « {f['what']} » n'est dans aucun extrait cité")
    empty = '{"answer": "Je ne sais pas.", "quotes": []}' if mode == "quoted" else \
        '{"answer": "Je ne sais pas.", "sources": []}'
    return ("Ta réponse ne peut pas être montrée : " + " ; ".join(said) + ". Corrige-la : recopie mot pour mot "
            "les phrases des extraits, n'écris que des chiffres qui y sont, ou réponds exactement " + empty +
            ". Réponds uniquement avec l'objet JSON.")


def _attribute(value) -> str:
    return html.escape(str(value), quote=True)


def _content(text: str) -> str:
    # Only the angle brackets: « Boréal & Moi » stays readable, and no tag can be written without them.
    return text.replace("<", "&lt;").replace(">", "&gt;")
