"""N3 — answers with sources: the model answers from the passages it was sent, and must cite them.

What it is for: retrieval (N1, N2) finds passages; a model turns them into an
answer in the learner's words. The model knows of the documents only what the
prompt carries, so the plumbing is where the bugs are: what is sent, how the
reply is read, and what is refused. Taught in notebook 03.

The contract, checked in code, not asked for politely:

- at most 4 passages of at most 1,500 characters each (cut in code points); a
  question over 1,000 characters is refused before any call (the provider bills
  every character of the prompt); an empty question or no passages: « je ne
  sais pas », no call made;
- the reply is one JSON object, bare or wrapped whole in one code fence;
  anything else is asked again, up to ``attempts`` times, then the answer is
  **unavailable**. Ids are compared as text (``3`` is ``"3"``), booleans are not
  ids; an id never sent, or a real answer that cites nothing, is **refused**;
  « Je ne sais pas. » is the **no answer**.

Four model modes (``mode``), each measured on every judged question
(``benchmarks/bench_answers.py``):

- ``"pointing"``: the passages are cut into numbered sentences; under a schema
  that allows those numbers and no others, the model chooses the sentences that
  answer (at most ``MAX_SENTENCES``), or none. The answer *is* those sentences,
  copied by code;
- ``"pointing-lead"`` (``MODEL_MODE``, the model's mode when one is asked): the same, with a few words first (« Non. »,
  « 12 jours. ») whose figures must be in a chosen sentence;
- ``"quoted"``: the model writes the answer and, for each passage it cites, the
  words it rests on; each quote must be in its passage
  (``rungs.grounding.claims.found``: whitespace, case, quotation marks and
  apostrophes normalised, nothing looser);
- ``"free"``: the answer and the ids it cites (the rung before these checks).

And the floor they are measured against, ``"copy"`` (``rungs.rag.copying``), the
default: no model reads — the ``COPIED`` sentences the hybrid over sentences ranks
first, copied and cited, shown or not as the decision says (``rungs.rag.decision``:
the gate's one call and how well the sentences match, fitted on the handbook's
deciding half; no model mode beats the copy by a paired test, so none is the
default). ``READERS`` names all five.

In every mode (``check_figures=True``) every figure of the answer
(``rungs.grounding.figures``) must be in a quote, a cited passage or the
question. A fault is sent back once — one repair round trip that names it — and
if the second reply has it too, the answer is refused: never shown, marked or not.

What the checks buy: every cited id was sent, every quote is in its passage,
every figure is in what is cited. What they cannot catch: a true quote under a
wrong conclusion, or a figure the passage holds that answers another question.
The words are checked, not the reasoning.

Rooms, one concept each:

- ``build``      what is sent: the passages cut, the prompt laid out for reuse, the schema
- ``prompts``    the words asked, mode by mode; the no-answer rule; the repair message
- ``read``       a reply read strictly and settled against what was sent
- ``replies``    each reader's reply, typed (``PointingReply``, ``QuotedReply``, ``FreeReply``): decoded once, read by field
- ``pointing``   the numbered sentences, a pointing reply, a lead-in anchored to its sentences
- ``copying``    the floor: the best sentences copied, no model
- ``decision``   whether to show the copy: P(right) from the gate and the copy's signals, at a coverage
- ``answering``  ``answer``: the rung in one call, returning ``rungs.grounding.Answer``
- ``answerers``  ``Rag``: a retriever and the rung, as an ``Answerer`` (what ``python -m rungs ask`` runs)

Cost: one call per attempt, one more for a repair; reading the prompt dominates
(``Answer.cost``; measured in ``benchmarks/README.md``).
"""

from ..grounding.abstain import NO_ANSWER, is_no_answer
from ..grounding.answer import AnswerNotGrounded, AnswerUnavailable, QuoteNotFound, UnsupportedFigure
from ..grounding.replies import UnusableReply
from .answerers import Rag
from .answering import AUTO, DECISIONS, DEFAULT_GATE, DEFAULT_MODE, FENCES, MAX_ATTEMPTS, MODEL_MODE, READERS, answer
from .decision import HANDBOOK_DECISION, SIGNALS, shipped, signals
from .build import MAX_CHARS, MAX_PASSAGES, MODES, build_prompt, check_prompt, prepare_passages, schema_for
from .copying import COPIED, COPY, copy
from .pointing import MAX_LEAD_CHARS, MAX_SENTENCES, SENTENCES_SENT, anchor, decode_pointing, sentences_for
from .prompts import (COLLECTION, HANDBOOK, NO_ANSWER_RULE, NO_ANSWER_RULES, PROMPT, PROMPT_POINTING,
                      PROMPT_POINTING_LEAD, PROMPT_QUOTED, PROMPT_REWRITTEN, PROMPTS, repair_message)
from .read import decode, ground, point
from .readers import TABLE, Reader, reader
from .replies import FreeReply, PointingReply, QuotedReply

__all__ = ["AUTO", "AnswerNotGrounded", "AnswerUnavailable", "COLLECTION", "COPIED", "COPY", "DECISIONS", "DEFAULT_GATE", "DEFAULT_MODE", "FreeReply", "HANDBOOK_DECISION", "MODEL_MODE", "SIGNALS", "shipped", "signals", "FENCES", "HANDBOOK", "MAX_ATTEMPTS",
           "MAX_CHARS", "MAX_LEAD_CHARS", "MAX_PASSAGES", "MAX_SENTENCES", "MODES", "NO_ANSWER", "NO_ANSWER_RULE",
           "NO_ANSWER_RULES", "PointingReply", "PROMPT", "PROMPTS", "PROMPT_POINTING", "PROMPT_POINTING_LEAD", "PROMPT_QUOTED",
           "PROMPT_REWRITTEN", "QuoteNotFound", "QuotedReply", "READERS", "Rag", "Reader", "TABLE", "SENTENCES_SENT", "UnsupportedFigure", "UnusableReply",
           "anchor", "answer", "build_prompt", "check_prompt", "copy", "decode", "decode_pointing", "ground", "is_no_answer",
           "point", "prepare_passages", "reader", "repair_message", "schema_for", "sentences_for"]
