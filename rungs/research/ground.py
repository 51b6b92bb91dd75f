"""Citations the model cannot forge: checked as the text streams, against the sources actually gathered.

What it is for: N5's report cites numbered sources (« [2] »). A model — or a
page that imitates one — can write any number. ``CitationFilter`` reads the
stream piece by piece, holds a « [ » until it closes (a partial « [1 » is never
shown), then keeps the bracket if every number in it was gathered, removes it
if not (with a note), and removes any bracket that merely looks like a
citation (« [source 9] », « [page 3] »). ``check_citations`` does the same to
a whole text at once.

Cost: linear in the text's length; a held bracket is at most what the stream
sends before it closes.
"""

from __future__ import annotations

import re

from ..core.errors import BadArgument, check_text
from ..core.replies import MAX_REPLY_CHARS


_LOOKS_LIKE = re.compile(r"\d|source|page|extrait", re.IGNORECASE)
_CITATION_CHARS = re.compile(r"[\d\s,;]*")  # all a citation may hold: digits, spaces, « , » and « ; »
_BRACKET = re.compile(r"[\[\]]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # in a Python string, a surrogate is always half of nothing
#: How much of a removed group a note quotes: a 1 MB bracket must not make a 1 MB note.
QUOTE_CHARS = 80


class _Group:
    """A « [ » not yet closed: what follows it (``parts``), its own words, the brackets closed inside it."""

    __slots__ = ("parts", "own", "kids")

    def __init__(self):
        self.parts, self.own, self.kids = ["["], [], []


class CitationFilter:
    """Checks citations while text streams: holds a bracket until it closes, then keeps it or removes it.

    Every bracket is judged on its own words when it closes, however long, spaced or nested: a
    citation (« [1] », « [ 1, 3 ] ») is kept if every number in it was gathered and removed if not;
    a bracket that looks like one (a digit, « source », « page », « extrait ») is removed; any other
    bracket is text and kept. A bracket inside a bracket is judged first, so « Voir [ note [1] fin. »
    keeps its valid « [1] » and all its words. Linear in the text; the same result for every way
    the stream is cut into pieces.
    """

    def __init__(self, allowed: set[int], emit):
        if isinstance(allowed, (str, bytes)) or not all(isinstance(n, int) and not isinstance(n, bool)
                                                         for n in allowed):
            raise BadArgument("allowed must be a set of source numbers (integers)")
        if not callable(emit):
            raise BadArgument(f"emit must be a function that shows text, not {type(emit).__name__}")
        self.allowed, self.emit = set(allowed), emit
        self._open: list[_Group] = []
        self.removed: list[str] = []
        self.cited: list[int] = []

    @property
    def held(self) -> str:
        """What is held back, waiting for its « ] »."""
        return _flat([g.parts for g in self._open])

    def discard(self) -> None:
        """Forget what is held (the stream failed): a half citation is never shown."""
        self._open = []

    def feed(self, text: str) -> None:
        if not isinstance(text, str):
            raise BadArgument(f"a streamed piece must be text, not {type(text).__name__}")
        out, i = [], 0
        while i < len(text):
            if not self._open:  # outside every bracket, a « ] » that closes nothing is text: on to the next « [ »
                j = text.find("[", i)
                out.append(text[i:] if j < 0 else text[i:j])
                if j < 0:
                    break
                self._open.append(_Group())
                i = j + 1
                continue
            match = _BRACKET.search(text, i)
            j = match.start() if match else len(text)
            if j > i:  # words held inside the open bracket
                self._open[-1].parts.append(text[i:j])
                self._open[-1].own.append(text[i:j])
            if match is None:
                break
            if text[j] == "[":
                self._open.append(_Group())
            else:
                outcome = self._close(self._open.pop())
                if self._open:
                    self._open[-1].parts.append(outcome)
                    self._open[-1].kids.append(outcome)
                else:
                    out.append(outcome)
            i = j + 1
        shown = _flat(out)
        if shown:
            self.emit(shown)  # one event per delta, whatever was held back inside it

    def _close(self, group: _Group) -> list:
        """What a closed bracket becomes: itself, nothing, or only the brackets that were inside it."""
        own = "".join(group.own)
        numbers = _citation(own) if not group.kids else None
        if numbers is not None:
            # A number of 5,000 digits is not compared as an integer (Python will not even read it).
            if all(len(n) <= 9 and int(n) in self.allowed for n in numbers):
                for n in map(int, numbers):  # « [1, 01] » cites 1 once
                    if n not in self.cited:
                        self.cited.append(n)
                group.parts.append("]")
                return group.parts
            self.removed.append(_quote("[" + own + "]"))  # a citation of something not gathered never reaches the reader
            return []
        if _looks_like(own):
            self.removed.append(_quote("[" + own + "]"))
            return group.kids  # its own words go; the brackets inside it were judged on their own
        if group.kids and not own.strip():
            return group.kids  # « [[1]] » is « [1] », and « [[source 9]] » is nothing
        group.parts.append("]")
        return group.parts

    def finish(self) -> None:
        """End of the stream: a half citation is dropped; an unclosed bracket of text is kept as text."""
        out = []
        for group in self._open:  # outermost first: each one's text comes before the next one's
            own = "".join(group.own)
            # A half citation (« [1, 2 », « [ »), or a bracket whose only contents were removed: nothing to show.
            if _half(own) and not _flat(group.kids):
                self.removed.append(_quote("[" + own))
                continue
            out.append(group.parts)
        self._open = []
        shown = _flat(out)
        if shown:
            self.emit(shown)


def _citation(own: str) -> list[str] | None:
    """The numbers of « 1, 3 » (a citation's inside), or None if it is not only numbers and separators."""
    if not _CITATION_CHARS.fullmatch(own):
        return None
    numbers = [n.strip() for n in re.split(r"[,;]", own)]
    return numbers if all(n.isdecimal() for n in numbers) else None


def _looks_like(own: str) -> bool:
    # A digit of any script (« ３ », « ¹ », « Ⅲ ») or a word that names a source.
    return bool(_LOOKS_LIKE.search(own)) or any(ch.isnumeric() for ch in own)


def _half(own: str) -> bool:
    """« [1, 2 », « [source 3 », « [ »: the beginning of a citation the stream cut off."""
    rest = own.lstrip()
    for word in ("source", "page", "extrait"):
        if rest.lower().startswith(word):
            rest = rest[len(word):].lstrip(" :")
            break
    return bool(re.fullmatch(r"[\d\s,;]*", rest))


def _text(delta) -> str:
    """A streamed piece as text a reader can be shown: half of a UTF-16 pair becomes « � »."""
    if not isinstance(delta, str):
        raise BadArgument(f"a streamed piece must be text, not {type(delta).__name__}")
    return _SURROGATE.sub("\ufffd", delta)


def _quote(text: str) -> str:
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS - 1] + "…"


def _flat(tree) -> str:
    """The text of nested lists of strings, in order (iteratively: a bracket nested 100,000 deep is fine)."""
    out, stack = [], [iter(tree)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, str):
                out.append(item)
            else:
                stack.append(iter(item))
                break
        else:
            stack.pop()
    return "".join(out)


def check_citations(text: str, allowed: set[int]) -> tuple[str, list[int], list[str]]:
    """The same check on a whole text: (clean text, numbers cited, groups removed)."""
    check_text(text, "text", max_chars=MAX_REPLY_CHARS)
    out = []
    f = CitationFilter(allowed, out.append)
    f.feed(text)
    f.finish()
    return "".join(out), f.cited, f.removed
