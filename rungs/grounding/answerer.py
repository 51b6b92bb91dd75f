"""What every answerer promises: built once, then ``ask(question) -> Answer``.

What it is for: the retrieval half has one contract (``rungs.core.retrieval.Retriever``),
checked over every retriever the package defines. The answer half has this one:
an ``Answerer`` is built from what it needs (a retriever, a client, its knobs)
and answers a question in the one shape, ``rungs.grounding.answer.Answer``.
N3's answerers live in ``rungs.rag``, N5's in ``rungs.research``; the suite finds
every subclass by itself and runs ``rungs.grounding.contract`` on it.

Cost: what the subclass's ``_ask`` costs; the check of the question is free.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from ..core.errors import BadArgument, Checked, check_query
from .answer import Answer

#: The longest question any answerer reads: a question, not a document (the prompt is billed by the token).
MAX_QUESTION = 1000


class Answerer(ABC):
    """Answers a question from its documents; ``name`` says which rung and mode."""

    name = "answerer"

    def ask(self, question: str) -> Answer:
        """The answer to ``question``: answered, no answer, unavailable or refused — never an exception
        for what a model did; a ``BadArgument`` for what the caller did (a question over 1,000 characters)."""
        question = Checked(check_query(question, name="question", max_chars=MAX_QUESTION))  # once, at the door
        answer = self._ask(question)
        if not isinstance(answer, Answer):  # the one shape, or the subclass is broken: said, not passed on
            raise BadArgument(f"{type(self).__name__}._ask returned {type(answer).__name__}, not an Answer")
        return answer

    @abstractmethod
    def _ask(self, question: str) -> Answer:
        """The subclass's work: retrieve, prompt, read, check — and say what became of the question."""
