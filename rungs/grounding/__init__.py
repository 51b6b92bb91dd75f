"""The grounding room: what ties a model's words to the passages it was sent.

Above the model room, below the rungs that answer (N3 ``rag``, N4 ``decide`` and
``rerank``, N5 ``research``), and used by the answer mark (``rungs.lab.answers``):
one home for each rule those rungs share, so that two of them cannot disagree.

- ``answer``     ``Answer``, ``Status``, ``Cost``, ``Quote``, ``FigureCheck``: the one shape of an answer
- ``trail``      what a rung did on the way, typed: ``Gate``, ``Decided``, ``Trail`` (``answer.gate``, ``answer.decision``…)
- ``showing``    the one printer of an answer (``Answer.lines()``, ``print(answer)``, ``python -m rungs ask``)
- ``events``     what an answer says while it is made: the one event type of N3 and N5 (``ListSink``, ``printing_sink``)
- ``answerer``   ``Answerer``: built once, then ``ask(question) -> Answer``
- ``contract``   the answer contract as named checks, run over every answerer by discovery; ``check_answerer``
- ``doubles``    the contract's doubles: ``Behaving`` (a model every way a model can be), answerers planted broken
- ``abstain``    the no-answer rule: ``NO_ANSWER``, ``is_no_answer``
- ``cut``        the one rule of deciding at a threshold: ``below``, ``passes`` (a P equal to it passes)
- ``citations``  the one citation syntax, « [1, 3] »
- ``claims``     a quote found word for word in its passage; the whole check of an answer's claims
- ``figures``    the one reading of a figure (amounts, durations, times, dates…) for the checks and the mark
- ``replies``    the one reader of a model's JSON reply (strict for N3, lenient for N4 and N5)
- ``logprobs``   a probability read from the first token (« Oui » / « Non »), for N4 and N3's gate

The sentences an answer is cut into come from the ground floor (``rungs.core.sentences``),
which the snippets and the passages share.
"""

from .abstain import NO_ANSWER, is_no_answer
from .answer import (Answer, AnswerNotGrounded, AnswerUnavailable, Cost, FigureCheck, Quote, QuoteNotFound, Status,
                     UnsupportedFigure)
from .answerer import Answerer
from .trail import Decided, Gate, Trail

__all__ = ["Answer", "AnswerNotGrounded", "AnswerUnavailable", "Answerer", "Cost", "Decided", "FigureCheck", "Gate",
           "NO_ANSWER", "Quote", "QuoteNotFound", "Status", "Trail", "UnsupportedFigure", "is_no_answer"]
