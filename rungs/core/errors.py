"""The collection's errors, in one family: catch ``RungsError`` and you catch anything rungs refused.

What it is for: a learner (or a notebook cell that shows a failure on
purpose) can write ``except RungsError`` once, whatever rung raised. Every
error keeps its own name beneath the root — ``FtsSyntaxError``,
``AnswerNotGrounded``, ``ModelUnavailable`` … — and most also keep the
built-in class they always had (``ValueError``, ``RuntimeError``), so code
written against the old names still catches them.

``BadArgument`` is the one error for an argument rungs cannot use: a wrong
type, NaN or infinity, a number out of range, an unknown knob. Its message
names the argument and says what would be accepted. The ``check_*``
functions below raise it; each rung calls them once, at its door, before any
work is done. A text already checked at the first door (``Checked``, what
``Answerer.ask`` hands on) is passed on by the later ones without being read
again.

Cost: nothing.
"""

from __future__ import annotations

import decimal
import math
import numbers


class RungsError(Exception):
    """Anything rungs refused or could not do; the message says what to change."""


class BadArgument(RungsError, ValueError, TypeError):
    """An argument rungs cannot use (wrong type, not finite, out of range, unknown); the message names it."""


#: The longest query any rung accepts. A question is a sentence, not a document: past this,
#: a query is refused at once instead of costing time in proportion to its length (or worse).
MAX_QUERY_CHARS = 2000


class Checked(str):
    """A text checked once at a door (``Answerer.ask``): a string with no lone surrogate. The checks below
    pass it on after one length comparison instead of reading it again — the question is checked once, not at
    every room it enters (``benchmarks/walk_ask.py`` counts them)."""


def check_query(query, *, name: str = "query", max_chars: int = MAX_QUERY_CHARS) -> str:
    """A query is text of at most ``max_chars`` characters (an empty one is allowed: it finds nothing)."""
    if type(query) is Checked and len(query) <= max_chars:  # read at the door already: its type says so
        return query
    if not isinstance(query, str):
        raise BadArgument(f"{name} must be a string, not {type(query).__name__}")
    if len(query) > max_chars:
        raise BadArgument(f"{name} has {len(query)} characters; the limit is {max_chars} "
                          "(ask a question, not a document)")
    _no_lone_surrogate(query, name)
    return query


#: The longest text any rung reads in one piece (a document's field, a text to tokenise): a long book
#: is a few million characters; past this, cut it into documents (``rungs.passages.split``).
MAX_TEXT_CHARS = 10_000_000


def check_text(value, name: str, *, max_chars: int = MAX_TEXT_CHARS, allow_none: bool = False) -> str | None:
    """Text a rung can index, store or send: a string (or None when allowed) of at most ``max_chars``."""
    if value is None and allow_none:
        return None
    if type(value) is Checked and len(value) <= max_chars:  # read at the door already: its type says so
        return value
    if not isinstance(value, str):
        raise BadArgument(f"{name} must be a string{' or None' if allow_none else ''}, "
                          f"not {type(value).__name__} {short_repr(value)}")
    if len(value) > max_chars:
        raise BadArgument(f"{name} has {len(value):,} characters; the limit is {max_chars:,} "
                          "(cut it into smaller documents)")
    _no_lone_surrogate(value, name)
    return value


def _no_lone_surrogate(text: str, name: str) -> None:
    # Half of a UTF-16 pair is not a character: SQLite, a cache key or a model would each fail on it later.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise BadArgument(f"{name} holds a lone surrogate (U+{ord(text[err.start]):04X} at position {err.start}), "
                          "which is not text: decode the bytes with errors='replace'") from None


def short_repr(value, width: int = 60) -> str:
    """A value as a message may quote it: its repr, cut (a 1 MB argument must not make a 1 MB message)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return _digits(value)
    try:
        text = repr(value) if not isinstance(value, (list, tuple, dict, set)) or len(value) < 20 else \
            f"<{type(value).__name__} of {len(value):,}>"
    except (ValueError, RecursionError):  # a repr can fail too (a list nested 10,000 deep)
        text = f"<{type(value).__name__}>"
    return text if len(text) <= width else text[:width - 1] + "…"


def check_client(client, name: str = "client", methods=("chat",)):
    """A model client: anything with the methods a rung calls (rungs.model.Client, ScriptedClient, your own)."""
    missing = [m for m in methods if not callable(getattr(client, m, None))]
    if missing:
        raise BadArgument(f"{name} must be a model client with {', '.join(m + '()' for m in methods)} "
                          f"(rungs.model.Client, ScriptedClient…), not {type(client).__name__}")
    return client


def check_bool(value, name: str) -> bool:
    """True or False (not 1, not "yes": a flag that accepted anything would hide a typo)."""
    if not isinstance(value, bool):
        raise BadArgument(f"{name} must be True or False, not {type(value).__name__} {short_repr(value)}")
    return value


#: The largest ``limit`` a search accepts: more results than this is a dump, not a ranking.
MAX_LIMIT = 1_000_000


def check_int(value, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (not a bool, not a float) within [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise BadArgument(f"{name} must be an integer, not {type(value).__name__} {short_repr(value)}")
    value = int(value)
    if low is not None and value < low:
        raise BadArgument(f"{name} must be {low} or more, not {_digits(value)}")
    if high is not None and value > high:
        raise BadArgument(f"{name} must be {high:,} or less, not {_digits(value)}")
    return value


def _digits(value: int) -> str:
    # Python refuses to print an integer of more than 4,300 digits: say how big it is instead.
    return f"{value:,}" if value.bit_length() < 200 else f"an integer of about {int(value.bit_length() * 0.30103):,} digits"


def check_limit(limit) -> int:
    """How many results: an integer from 0 (no results, no work) to ``MAX_LIMIT``."""
    return check_int(limit, "limit", low=0, high=MAX_LIMIT)


def check_number(value, name: str, *, low: float | None = None, high: float | None = None,
                 low_open: bool = False) -> float:
    """A finite real number (not a bool) within [low, high] (``low_open``: strictly above ``low``), as its float:
    an int, a float, a numpy number, a ``Fraction`` or a ``Decimal`` (a real number that is not ``numbers.Real``)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, decimal.Decimal)):
        raise BadArgument(f"{name} must be {_wanted(low, high)}, not {type(value).__name__} {short_repr(value)}"
                          + (": pass float(...)" if isinstance(value, str) else ""))
    try:
        number = float(value)
    except OverflowError:  # an integer with hundreds of digits has no float
        raise BadArgument(f"{name} must be a finite number, not {_digits(int(value))}") from None
    except ValueError:  # a signalling NaN Decimal has no float
        number = math.nan
    if not math.isfinite(number):  # a Decimal past a float's range is inf here: name the value it was
        raise BadArgument(f"{name} must be a finite number, not {short_repr(value)}")
    value = number
    if low is not None and (value <= low if low_open else value < low):
        raise BadArgument(f"{name} must be {'above' if low_open else 'at least'} {low:g}, not {value:g}")
    if high is not None and value > high:
        raise BadArgument(f"{name} must be at most {high:g}, not {value:g}")
    return value


def _wanted(low, high) -> str:
    # Say what is accepted: « a number » alone reads oddly beside a Decimal or a complex, which are numbers too.
    span = f" from {low:g} to {high:g}" if low is not None and high is not None else ""
    return f"a real number{span} (an int, a float, a Fraction or a Decimal)"


def check_choice(value, name: str, options) -> str:
    """One of a few named options."""
    options = tuple(options)
    if not isinstance(value, str) or value not in options:
        raise BadArgument(f"{name} must be one of {', '.join(repr(o) for o in options)}, not {short_repr(value)}")
    return value


def check_names(values, name: str) -> tuple[str, ...]:
    """A list of names (a bare string is refused: iterated, « title » would be five fields t, i, t, l, e)."""
    if isinstance(values, str) or not hasattr(values, "__iter__"):
        raise BadArgument(f"{name} must be a list of names, not {type(values).__name__} {short_repr(values)}")
    if isinstance(values, dict):
        raise BadArgument(f"{name} must be a list of names, not a dict")
    values = tuple(values)
    bad = [v for v in values if not isinstance(v, str) or not v]
    if bad:
        raise BadArgument(f"{name} must hold non-empty strings, not {short_repr(bad[0])}")
    return values
