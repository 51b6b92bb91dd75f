"""The no-answer rule: « je ne sais pas », said one way, recognised however it is dressed.

What it is for: every answering rung may decline. N3 asks the model to write
« Je ne sais pas. » when the passages do not answer; N5's report may say it with
a citation glued on (« Je ne sais pas [2]. »); the answer mark counts it as an
abstention. One sentence, one reader of it, here — and an ``Answer`` whose
status is ``no answer`` shows exactly ``NO_ANSWER``.

Cost: one regular expression.
"""

from __future__ import annotations

import re

from ..core.errors import BadArgument
from .citations import without_citations

#: What a reader is shown when nothing answers: the rung's whole answer, and the mark's abstention.
NO_ANSWER = "je ne sais pas"


def is_no_answer(text: str) -> bool:
    """« Je ne sais pas. », « je ne sais pas », « JE NE SAIS PAS ! », « Je ne sais pas [1]. »: the no-answer."""
    if not isinstance(text, str):
        raise BadArgument(f"text must be a string, not {type(text).__name__}")
    said = without_citations(text).replace("’", "'")
    return re.sub(r"[\s.!…]+", " ", said).strip().lower() == NO_ANSWER
