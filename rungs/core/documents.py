"""What a document is, for every rung: one rule, checked at every door, and the text a rung reads of one.

What it is for: every builder (FTS5, BM25, the fast path, the vector leg, the
passages, the model rungs) receives « documents » — dicts with an ``id`` and
some text. ``check_documents`` is the one rule for what that means, applied
before any work, so that a bad document is refused by name instead of failing
deep inside SQLite or numpy. ``page_text`` and ``passage_text`` say what text a
rung reads of a document, so the vector leg and the model read the same words.

Cost: one pass over the documents' fields.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from .errors import MAX_TEXT_CHARS, BadArgument, short_repr, check_text


def page_text(page: dict) -> str:
    """Title and body as one text, the way the vector leg and the model read a page (a missing title is empty)."""
    if not isinstance(page, Mapping):
        raise BadArgument(f"page must be a dict with a title and a body, not {type(page).__name__}")
    return (page.get("title") or "") + ("\n\n" + page["body"] if page.get("body") else "")


def passage_text(doc: dict) -> str:
    """What a passage says: its ``text`` if it has one, else its page's title and body."""
    if not isinstance(doc, Mapping):
        raise BadArgument(f"a passage must be a dict with a text (or a title and a body), not {type(doc).__name__}")
    return doc["text"] if doc.get("text") is not None else page_text(doc)


def duplicates(ids) -> list:
    """The ids that occur more than once, sorted (each rung says in its own words why that is refused)."""
    return sorted(i for i, n in Counter(ids).items() if n > 1)


#: The text fields every rung may read from a document; each is a string, or missing, or None.
TEXT_FIELDS = ("title", "body", "text")


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: check_text says where
        return False
    return True


def check_documents(documents, *, name: str = "documents", fields=(), tokens: bool = False) -> list[dict]:
    """The one rule for what a rung accepts as documents; every builder calls it before any work.

    ``documents`` is a list (any iterable but a string or a dict) of dicts. Each has an ``id``: a
    non-empty string or an integer (not a bool: True would pass as 1); ids are unique as text
    (3 and "3" are one id). ``title``, ``body``, ``text`` and the ``fields`` named by the rung are
    strings of at most ``MAX_TEXT_CHARS`` characters, or missing, or None (``tokens``: a list of
    words is accepted too, for text tokenised beforehand). Anything else is a ``BadArgument`` that
    names the document. Returns the documents as a list.
    """
    if isinstance(documents, (str, bytes, Mapping)) or not isinstance(documents, Iterable):
        raise BadArgument(f"{name} must be a list of dicts (each with an 'id'), not {type(documents).__name__}")
    documents = list(documents)
    fields = tuple(dict.fromkeys((*TEXT_FIELDS, *fields)))
    for i, doc in enumerate(documents):
        where = f"{name}[{i}]"
        if not isinstance(doc, Mapping):
            raise BadArgument(f"{where} must be a dict with an 'id', not {type(doc).__name__} {short_repr(doc)}")
        if "id" not in doc:
            raise BadArgument(f"{where} has no 'id': every document needs one, to be cited and found again")
        doc_id = doc["id"]
        if (isinstance(doc_id, bool) or not isinstance(doc_id, (str, int))
                or (isinstance(doc_id, str) and not doc_id.strip())
                or (isinstance(doc_id, int) and doc_id.bit_length() > 63)):  # an id is a name, not a quantity
            raise BadArgument(f"{where} has id {short_repr(doc_id)} ({type(doc_id).__name__}): "
                              "an id is a non-empty string or an integer of at most 18 digits")
        if isinstance(doc_id, str):
            check_text(doc_id, f"{where}'s id", max_chars=1000)
        for field in fields:
            value = doc.get(field)
            if value is None or (type(value) is str and len(value) <= MAX_TEXT_CHARS and _encodes(value)):
                continue  # the usual case, checked without writing the message a refusal would need
            where = f"{name}[{i}] (id {short_repr(doc_id)})"
            if tokens and isinstance(value, list):
                if not all(isinstance(w, str) for w in value):
                    raise BadArgument(f"{where}: {field} as a list must hold words (strings)")
                continue
            check_text(value, f"{where}: {field}", max_chars=MAX_TEXT_CHARS, allow_none=True)
    dup = duplicates(str(d["id"]) for d in documents)
    if dup:
        raise BadArgument(f"duplicate document ids {dup[:5]} in {name}: each document needs its own id")
    return documents
