"""Citations the model cannot forge: checked as the text streams, against the sources actually gathered.

What it is for: N5's report cites numbered sources (« [2] »). A model — or a
page that imitates one — can write any number. ``CitationFilter`` reads the
stream piece by piece, holds a « [ » until it closes (a partial « [1 » is never
shown), then keeps the bracket if every number in it was gathered, removes it
if not (with a note), and removes any bracket that merely looks like a
citation (« [source 9] », « [page 3] »). Brackets of other scripts are read as
brackets (« ［9］ », « 【9】 », « 〔9〕 » become « [9] »), and a citation in
words inside parentheses (« (source 9) », « (sources 1 et 3) ») is kept or
removed by the same rule. ``check_citations`` does the same to a whole text
at once, its exponents read as a whole sentence's are (below). The syntax
itself — « [2] », « [1, 3] » — is ``rungs.grounding.citations``'s; this module
is what stands between a forger and it.

Once a sentence of the report is whole (``rungs.research.report``), two more
forms are read: a citation written as an exponent (« illimités^9 »,
« illimités⁹ ») is kept as « [9] » if source 9 was gathered and removed if
not — « 1 200 m² » is an area, not a citation —; and ``canonical`` writes every
citation left the one way (« (source 2) » and « [ 1 ;3 ] » become « [2] » and
« [1, 3] »), so that every later reader — the quotes, the figure check, the
list of sources — reads one syntax.

Cost: linear in the text's length. What is held back is bounded: a bracket
still open after ``HELD_CHARS`` characters is no citation — it is shown as
text, or removed if it looked like one — so reading ``held`` after every
piece stays linear too.
"""

from __future__ import annotations

import re

from ..core.errors import BadArgument, check_text
from ..grounding.citations import CITATION_BODY, cited_numbers, numbers as _numbers
from ..grounding.replies import MAX_REPLY_CHARS


_LOOKS_LIKE = re.compile(r"\d|source|page|extrait", re.IGNORECASE)
_BRACKET = re.compile(r"[\[\]]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # in a Python string, a surrogate is always half of nothing
#: How much of a removed group a note quotes: a 1 MB bracket must not make a 1 MB note.
QUOTE_CHARS = 80
#: The most a filter holds back: a citation is a few characters; a bracket open longer than this is prose.
HELD_CHARS = 4000
#: Brackets of other scripts a model (or a page) may write a citation with: read as « [ » and « ] ».
LOOK_ALIKES = str.maketrans({"［": "[", "【": "[", "〔": "[", "〖": "[", "⟦": "[", "〘": "[", "⦋": "[", "⁅": "[",
                             "］": "]", "】": "]", "〕": "]", "〗": "]", "⟧": "]", "〙": "]", "⦌": "]", "⁆": "]"})
# « (source 9) », « (sources 1 et 3) », « (réf. 2) »: a citation in words, inside parentheses.
_WORDS = r"(?:sources?|extraits?|passages?|r[ée]f[ée]rences?|r[ée]f\.?|documents?|doc\.?)"
_PAREN = re.compile(r"\(\s*" + _WORDS + r"\s*[:#n°.]*\s*(\d+(?:\s*(?:,|;|&|et|and)\s*\d+)*)\s*\)", re.IGNORECASE)
_PAREN_SO_FAR = re.compile(r"\(\s*" + _WORDS + r"\s*[:#n°.]*[\s\d,;&etand]*", re.IGNORECASE)
_PAREN_WORDS = ("sources", "extraits", "passages", "références", "references", "réf.", "ref.", "documents", "doc.")
_PAREN_HELD = 60  # « (sources 1, 2, 3 et 4) » is short: past this, the parenthesis is prose


class _Group:
    """A « [ » not yet closed: what follows it (``parts``), its own words, the brackets closed inside it;
    ``size``, the characters it holds; ``shown``: released past the cap, as text (True) or removed (False)."""

    __slots__ = ("parts", "own", "kids", "size", "kids_size", "shown")

    def __init__(self):
        self.parts, self.own, self.kids, self.size, self.kids_size, self.shown = ["["], [], [], 1, 0, None


class CitationFilter:
    """Checks citations while text streams: holds a bracket until it closes, then keeps it or removes it.

    Every bracket is judged on its own words when it closes, however long, spaced or nested: a
    citation (« [1] », « [ 1, 3 ] ») is kept if every number in it was gathered and removed if not;
    a bracket that looks like one (a digit, « source », « page », « extrait ») is removed; any other
    bracket is text and kept. A bracket inside a bracket is judged first, so « Voir [ note [1] fin. »
    keeps its valid « [1] » and all its words. Brackets of other scripts count as brackets, and
    « (source 9) » is judged like « [9] ». A bracket still open after ``HELD_CHARS`` characters is
    released: shown as text, or removed if it looked like a citation. Linear in the text; the same
    result for every way the stream is cut into pieces. ``mark``: left where something was removed (the
    report's sentence gate withholds a sentence that held a forged citation; by default, nothing).
    """

    def __init__(self, allowed: set[int], emit, mark: str = ""):
        if isinstance(allowed, (str, bytes)) or not all(isinstance(n, int) and not isinstance(n, bool)
                                                         for n in allowed):
            raise BadArgument("allowed must be a set of source numbers (integers)")
        if not callable(emit):
            raise BadArgument(f"emit must be a function that shows text, not {type(emit).__name__}")
        if not isinstance(mark, str):
            raise BadArgument(f"mark must be text, not {type(mark).__name__}")
        self.allowed, self.emit, self.mark = set(allowed), emit, mark
        self._open: list[_Group] = []
        self._held = 0  # characters held by the groups not yet released
        self._released = 0  # how many open groups, at the bottom of the stack, were released (outermost first)
        self._paren: str | None = None  # a « ( » that may still become « (source 9) »
        self.removed: list[str] = []
        self.cited: list[int] = []

    @property
    def held(self) -> str:
        """What is held back, waiting for its « ] » or its « ) » (at most about ``HELD_CHARS`` characters)."""
        return _flat([g.parts for g in self._open[self._released:]]) + (self._paren or "")

    def discard(self) -> None:
        """Forget what is held (the stream failed): a half citation is never shown."""
        self._open, self._held, self._released, self._paren = [], 0, 0, None

    def feed(self, text: str) -> None:
        if not isinstance(text, str):
            raise BadArgument(f"a streamed piece must be text, not {type(text).__name__}")
        text = text.translate(LOOK_ALIKES)
        out, i = [], 0
        while i < len(text):
            if not self._open:  # outside every bracket, a « ] » that closes nothing is text: on to the next « [ »
                j = text.find("[", i)
                out.append(text[i:] if j < 0 else text[i:j])
                if j < 0:
                    break
                self._push(out)
                i = j + 1
                continue
            match = _BRACKET.search(text, i)
            j = match.start() if match else len(text)
            if j > i:  # words inside the innermost open bracket (held, or passed on if it was released)
                i = self._words(text, i, j, out)
                continue
            if text[j] == "[":
                self._push(out)
            else:
                self._end(out)
            i = j + 1
        shown = self._parens(_flat(out))
        if shown:
            self.emit(shown)  # one event per delta, whatever was held back inside it

    def _push(self, out: list) -> None:
        self._open.append(_Group())
        self._held += 1
        self._release(out)

    def _words(self, text: str, i: int, j: int, out: list) -> int:
        """Words for the innermost bracket, up to the cap (the rest comes round again); returns where it stopped."""
        group = self._open[-1]
        if group.shown is not None:  # released: its words pass (as text) or go (it looked like a citation)
            if group.shown:
                out.append(text[i:j])
            return j
        j = min(j, i + HELD_CHARS + 1 - self._held)  # released at the very character past the cap
        group.parts.append(text[i:j])
        group.own.append(text[i:j])
        group.size += j - i
        self._held += j - i
        self._release(out)
        return j

    def _end(self, out: list) -> None:
        """A « ] »: the innermost bracket closes, and what it becomes goes to its parent, or out."""
        group = self._open.pop()
        if group.shown is not None:
            self._released -= 1
            if group.shown:
                out.append("]")
            return
        self._held -= group.size
        outcome = self._close(group)
        parent = self._open[-1] if self._open else None
        if parent is None or parent.shown is not None:
            out.append(outcome)  # a released parent shows its kids as they close, in order
            return
        parent.parts.append(outcome)
        parent.kids.append(outcome)
        grown = group.size + 1 if outcome is group.parts else group.kids_size if outcome is group.kids else 0
        parent.kids_size += grown
        parent.size += grown
        self._held += grown
        self._release(out)

    def _release(self, out: list) -> None:
        """Past the cap, the outermost held bracket is no citation: shown as text, or removed if it looked
        like one (its closed brackets, judged on their own, are shown either way)."""
        while self._held > HELD_CHARS:
            group = self._open[self._released]
            self._released += 1
            own = "".join(group.own)
            group.shown = not _looks_like(own)
            if group.shown:
                out.append(group.parts)
            else:
                self.removed.append(_quote("[" + own))
                out.append(group.kids)
                out.append(self.mark)
            self._held -= group.size
            group.parts, group.own, group.kids, group.size = [], [], [], 0

    def _close(self, group: _Group) -> list:
        """What a closed bracket becomes: itself, nothing, or only the brackets that were inside it."""
        own = "".join(group.own)
        numbers = _citation(own) if not group.kids else None
        if numbers is not None:
            # A number of 5,000 digits is not compared as an integer (Python will not even read it).
            if all(len(n) <= 9 and int(n) in self.allowed for n in numbers):
                self._cite(numbers)
                group.parts.append("]")
                return group.parts
            self.removed.append(_quote("[" + own + "]"))  # a citation of something not gathered never reaches the reader
            return [self.mark]
        if _looks_like(own):
            self.removed.append(_quote("[" + own + "]"))
            group.kids.append(self.mark)
            return group.kids  # its own words go; the brackets inside it were judged on their own
        if group.kids and not own.strip():
            return group.kids  # « [[1]] » is « [1] », and « [[source 9]] » is nothing
        group.parts.append("]")
        return group.parts

    def _cite(self, numbers) -> None:
        for n in map(int, numbers):  # « [1, 01] » cites 1 once
            if n not in self.cited:
                self.cited.append(n)

    def _parens(self, text: str) -> str:
        """The second look, on what the brackets let through: « (source 9) » is a citation in words."""
        out, i = [], 0
        while i < len(text):
            if self._paren is None:
                j = text.find("(", i)
                out.append(text[i:] if j < 0 else text[i:j])
                if j < 0:
                    break
                self._paren, i = "(", j + 1
                continue
            ch, i = text[i], i + 1
            if ch == "(":  # another one opens: the one held was prose
                out.append(self._paren)
                self._paren = "("
                continue
            self._paren += ch
            if ch == ")":
                out.append(self._judge_paren(self._paren))
                self._paren = None
            elif len(self._paren) > _PAREN_HELD or not _may_cite(self._paren):
                out.append(self._paren)  # it cannot become a citation any more: prose, shown as it came
                self._paren = None
        return "".join(out)

    def _judge_paren(self, held: str) -> str:
        found = _PAREN.fullmatch(held)
        if found is None:
            return held
        numbers = _numbers(found.group(1))
        if all(len(n) <= 9 and int(n) in self.allowed for n in numbers):
            self._cite(numbers)
            return held
        self.removed.append(_quote(held))
        return self.mark

    def finish(self) -> None:
        """End of the stream: a half citation is dropped; an unclosed bracket of text is kept as text."""
        out = []
        for group in self._open[self._released:]:  # outermost first (the released ones have shown theirs)
            own = "".join(group.own)
            # A half citation (« [1, 2 », « [ »), or a bracket whose only contents were removed: nothing to show.
            if _half(own) and not _flat(group.kids):
                self.removed.append(_quote("[" + own))
                out.append(self.mark)
                continue
            out.append(group.parts)
        self._open, self._held, self._released = [], 0, 0
        shown = self._parens(_flat(out))
        if self._paren is not None:  # « (source 9 » cut off: a half citation goes; a half parenthesis of prose stays
            if re.search(r"\d", self._paren) and re.match(r"\(\s*" + _WORDS, self._paren, re.IGNORECASE):
                self.removed.append(_quote(self._paren))
                shown += self.mark
            else:
                shown += self._paren
            self._paren = None
        if shown:
            self.emit(shown)


def _may_cite(held: str) -> bool:
    """Can « ( » and what follows it still become « (source 9) »? A word begun, or a word and numbers."""
    begun = held[1:].lstrip().lower()
    return any(word.startswith(begun) for word in _PAREN_WORDS) or bool(_PAREN_SO_FAR.fullmatch(held))


def _citation(own: str) -> list[str] | None:
    """The numbers of « 1, 3 » (a citation's inside), or None if it is not only numbers and separators."""
    if not CITATION_BODY.fullmatch(own):
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
    return bool(CITATION_BODY.fullmatch(rest))


def piece_text(delta) -> str:
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
    """The same check on a whole text: (clean text, numbers cited, groups removed) — brackets as the stream
    reads them, then exponents as a whole sentence is read (« illimités^9 » of a source never gathered is removed)."""
    check_text(text, "text", max_chars=MAX_REPLY_CHARS)
    out = []
    f = CitationFilter(allowed, out.append)
    f.feed(text)
    f.finish()
    shown, removed = exponents("".join(out), allowed)
    cited = list(dict.fromkeys(f.cited + cited_numbers(shown)))  # « ^1 » kept is « [1] »: cited too
    return shown, cited, f.removed + removed


# ---------------------------------------------------------------- a whole sentence: exponents, and one way to write a citation

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
# « illimités^9 », « illimités^ 2, 3 », « illimités⁹ », « illimités.¹ »: a number written as an exponent.
# The word starts where a word starts (the look-behind): tried inside a long word, it would read it again
# from every letter — quadratic in a whole text.
_EXPONENT = re.compile(r"(?<![^\W\d_])(?P<word>[^\W\d_]*)(?P<mark>\^\s*\d+(?:[,;]\d+)*|⁽?[⁰¹²³⁴⁵⁶⁷⁸⁹]+(?:[,;]\s*[⁰¹²³⁴⁵⁶⁷⁸⁹]+)*⁾?)")
#: Where an exponent is a power, not a citation: « 1 200 m² », « 3 km² », « 2 m³ ».
POWER_UNITS = frozenset({"m", "cm", "mm", "dm", "km"})
# A caret whose citation was removed (« illimités^[9] » became « illimités^ »), or that cites in brackets.
_BARE_CARET = re.compile(r"(?<=\S)\^(?=\s*\[|[\s.,;:!?]|$)")
_BRACKETS = re.compile(r"\[" + CITATION_BODY.pattern + r"\]")
_SUP = re.compile(r"<sup>\s*(\d+(?:\s*[,;]\s*\d+)*)\s*</sup>", re.IGNORECASE)


def exponents(text: str, allowed: set[int]) -> tuple[str, list[str]]:
    """Citations written as exponents in one sentence: « ^9 » and « ⁹ » become « [9] » when 9 was gathered,
    and are removed (listed in what is returned) when not — « m² » stays. Returns (text, removed)."""
    removed: list[str] = []

    def judge(m):
        word, mark = m.group("word"), m.group("mark")
        if word.lower() in POWER_UNITS:
            return m.group(0)
        found = _numbers(mark.translate(_SUPERSCRIPT))  # « ⁽¹⁾ » and « ^1 » are both 1
        if found and all(len(n) <= 9 and int(n) in allowed for n in found):
            return f"{word} [{', '.join(str(int(n)) for n in found)}]"
        removed.append(_quote(mark))
        return word
    text = _SUP.sub(lambda m: "^" + "".join(m.group(1).split()), text)  # « <sup>9</sup> » shows as ⁹ in Markdown
    return _BARE_CARET.sub("", _EXPONENT.sub(judge, text)), removed


def canonical(text: str) -> str:
    """Every citation the filter kept, written the one way (``rungs.grounding.citations``): « (source 2) »
    → « [2] », « [ 1 ;3 ] » → « [1, 3] »; a bracket that only looks like a citation is left as it is."""
    def brackets(m):
        found = _citation(m.group(0)[1:-1])
        return m.group(0) if not found else "[" + ", ".join(str(int(n)) for n in found) + "]"
    return _BRACKETS.sub(brackets, _PAREN.sub(lambda m: "[" + ", ".join(str(int(n)) for n in _numbers(m.group(1))) + "]", text))
