"""Figures in a text, found and written one way: « 48 h » and « quarante-huit heures » are the same figure.

What it is for: a small model paraphrasing a number is where it fails most
(« 12 h 30 » for a night shift that starts at 21 h, « poste 4500 » that no page
mentions). N3 and N5 refuse, or mark, an answer holding a figure that none of
its cited passages holds; the answer mark (``rungs.lab.answers``) can read
figures with the same rules. Both need one reading of « a figure », so it
lives here, below them both.

A figure is a number with what it counts, read from folded text (lower case,
accents off, apostrophes and spaces made plain):

- **amounts** « 1 500 € », « 22 euros » → ``1500 €``, ``22 €``; **percentages**
  « 25 % », « 25 pour cent » → ``25 %``;
- **durations and counts** with a unit from a closed list (jour, semaine, mois,
  an, h, min, km, km/h, kg, fois) — « 2,5 jours ouvrables », « deux jours et demi »
  → ``2.5 jour``; « une heure » → ``1 h``; « 48 heures » and « 48 h » are one
  figure; a number with no unit it knows (« poste 4500 », « 482 salariés ») is
  a bare count, ``4500``;
- **times of day** « 8 h 30 », « 8h30 » → ``8:30 h``; « 21 h » is ``21 h``,
  the same figure as a duration of 21 hours (French writes them alike);
- **dates** « 1er mars », « 31/05 » → ``1/03``, ``31/05``; a month alone
  (« en février ») → ``month 02``; a year is a bare count;
- **phone numbers** « 0 800 44 12 12 » → ``tel 0800441212``; **article
  numbers** « art. 5 », « article L. 1234-5 » → ``art 5``, ``art l1234-5``;
- **ordinals** « troisième », « 3e » → ``3 e``.

Number words (« vingt-six », « quarante-huit », « deux millions », « deux virgule
cinq ») are read as digits, a run cut where French starts a new number (« un et
deux », « deux trois jours » are two); ordinals made of them too (« vingt et
unième » → ``21 e``); « un » and « une » only where they count — before a unit
(« un mois »), before « à/ou/et » and a number (« un à cinq jours »), after « au
moins » or « dont » — since they are articles first; « neuf » after « un
ordinateur » is new, not nine. Chosen by measurement against text2num
(``benchmarks/bench_numbers.py``).

``supported(figure, held)`` is the rule of the checks: a figure with a unit
needs the same value and unit among the passages' figures, or the same value
written bare there (« de 20 à 40 % » writes 20 bare); a bare figure needs the
value under any unit. ``unsupported(answer, passages)`` lists what fails, as
read: folded, number words in digits (« février » is « fevrier », « cinq
jours » is « 5 jours »).

Cost: a few regular-expression passes over the text; linear in its length.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..core.errors import check_text
from ..core.text import fold_fast, nfc

MONTHS = {"janvier": 1, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7, "aout": 8,
          "septembre": 9, "octobre": 10, "novembre": 11, "decembre": 12}
#: The units a figure may carry, as written (folded) → as compared (singular, one spelling): the one unit
#: vocabulary of the collection — the checks read figures with it, and the answer mark reads its words with it
#: (``rungs.lab.answers``), so « 22 euros » and « 22 € », « 25 % » and « 25 pour cent » are one fact to both.
UNITS = {"jours": "jour", "jour": "jour", "journees": "jour", "journee": "jour", "semaines": "semaine",
         "semaine": "semaine", "mois": "mois", "ans": "an", "an": "an", "annees": "an", "annee": "an",
         "heures": "h", "heure": "h", "h": "h", "minutes": "min", "minute": "min", "min": "min", "mn": "min",
         "euros": "€", "euro": "€", "eur": "€", "€": "€", "%": "%", "pourcent": "%", "pourcents": "%",
         "km": "km", "kilometres": "km", "kilometre": "km", "km/h": "km/h", "kg": "kg", "fois": "fois"}
#: French number words → their value: the one table of the checks and of the mark.
NUMBER_WORDS = {"zero": 0, "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7,
                "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12, "treize": 13, "quatorze": 14,
                "quinze": 15, "seize": 16, "vingt": 20, "vingts": 20, "trente": 30, "quarante": 40,
                "cinquante": 50, "soixante": 60, "cent": 100, "cents": 100, "mille": 1000}
_SMALL = {w: v for w, v in NUMBER_WORDS.items() if v < 100}
_ORDINALS = {"premier": 1, "premiere": 1, "deuxieme": 2, "second": 2, "seconde": 2, "troisieme": 3,
             "quatrieme": 4, "cinquieme": 5, "sixieme": 6, "septieme": 7, "huitieme": 8, "neuvieme": 9,
             "dixieme": 10, "treizieme": 13}


class Figure(NamedTuple):
    """One figure: as read (``text``: folded, number words in digits), and as compared (``value``, ``unit``, ``kind``)."""

    text: str
    value: str
    unit: str | None
    kind: str  # amount, percent, duration, time, date, month, phone, article, ordinal, count

    @property
    def key(self) -> str:
        """The figure as compared, in one string: « 2.5 jour », « 8:30 h », « tel 0800441212 », « 4500 »."""
        return f"{self.value} {self.unit}" if self.unit else self.value


#: A terminal's escape sequences (ECMA-48): a string one, ended (OSC, DCS, APC, PM: up to BEL or ESC and a
#: backslash), a control sequence (CSI: ESC [ 31 m, or its one-byte form), any other escape; then a lone control
#: character. Their digits are orders to a terminal (31 is red), not figures of the text. A string's body holds
#: no other start, so each start is scanned to the next at most: linear in the text, never quadratic.
_ESCAPES = re.compile(r"(?:\x1b[\]P^_X]|[\x90\x98\x9d-\x9f])[^\x07\x1b\x90\x98\x9c-\x9f]*(?:\x07|\x1b\\|\x9c)"
                      r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|\x1b[ -/]*[0-~]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """Text as figures are read from it: composed, folded, apostrophes one character, spaces one space;
    « 8:30 » written « 8 h 30 », « pour cent » written « % » (before « cent » can be read as 100); a terminal's
    escape sequences and control characters a space (« \\x1b[31m » holds no figure 31)."""
    text = fold_fast(nfc(_ESCAPES.sub(" ", text))).replace("’", "'").replace("ʼ", "'")
    # « € » and « % » stay as they are; non-breaking and thin spaces become plain ones (French writes 1 500 €).
    text = re.sub(r"[\s\u00a0\u202f]+", " ", text)
    # A time written with a colon is the time written with « h »: « 8:30 » is « 8 h 30 ».
    text = re.sub(r"(?<![\d:])\b([01]?\d|2[0-3]):([0-5]\d)\b(?!:\d)", r"\1 h \2", text)
    # « 25 pour cent » is « 25 % », never 25 and a hundred.
    text = re.sub(r"\bpour ?cents?\b", "%", text)
    # « une demi-journée » is half a day: 0,5 of the unit, so that it reads like « 0,5 jour ».
    return re.sub(r"\b(?:une )?demi-(journee|heure)", r"0,5 \1", text)


def read_numbers(text: str | None) -> str:
    """Text with every number written one way: the one number reader of the checks and of the answer mark.

    ``plain`` (folded; « 8:30 » → « 8 h 30 »; « pour cent » → « % »), number words in digits
    (« vingt-quatre » → 24, « un mois » → 1 mois), ordinal words as digits and « e » (« premier » → 1e,
    « troisième » → 3e). Numbers themselves keep their spelling; ``NUMBER`` finds one and ``number_value``
    writes it one way (« 1 500 » and « 1.500 » are 1500, « 2,50 » is 2.5).
    """
    text = _spell_out(plain(check_text(text, "text", allow_none=True) or ""))
    return re.sub(r"\b(" + "|".join(_ORDINALS) + r")\b", lambda m: f"{_ORDINALS[m.group(1)]}e", text)


_SCALES = {"cent": 100, "cents": 100, "mille": 1000, "million": 10**6, "millions": 10**6,
           "milliard": 10**9, "milliards": 10**9}
_WORD_NUMBER = "|".join(sorted([*_SMALL, *_SCALES], key=len, reverse=True))
# A run of number words: « vingt et un », « quatre-vingt-dix-sept », « deux millions », « deux virgule cinq ».
_NUMBER_WORDS = re.compile(rf"\b(?:{_WORD_NUMBER})(?:(?:[- ]et)?[- ](?:{_WORD_NUMBER}))*\b"
                           rf"(?: virgule (?:{_WORD_NUMBER})(?:[- ](?:{_WORD_NUMBER}))*\b)?")
#: What makes a lone « un »/« une » a number, not an article: a unit after it, « à/ou/et » and a number after
#: it (« un à cinq jours », « une ou deux fois »), « au moins » or « dont » before it.
_UNIT_AFTER = re.compile(r"(jours?|journees?|semaines?|mois|ans?\b|annees?|heures?|minutes?|fois)")
_COUNT_AFTER = re.compile(rf"(?:a|ou|et) (?:\d|(?:{_WORD_NUMBER})\b)")
_COUNT_BEFORE = re.compile(r"(?:au moins|dont) $")
# « neuf » after « un ordinateur », « le casque » is new, not nine.
_ADJECTIVE = re.compile(r"\b(?:un|une|le|la|l'|les|des|du|mon|ma|son|sa|votre|notre|ce|cet|cette) [a-z]+ $")
#: Ordinal words made of number words: « vingtième » → 20, « vingt et unième » → 21 (the stem as it is written).
_ORDINAL_STEMS = {"un": "un", "deux": "deux", "trois": "trois", "quatr": "quatre", "cinqu": "cinq", "six": "six",
                  "sept": "sept", "huit": "huit", "neuv": "neuf", "dix": "dix", "onz": "onze", "douz": "douze",
                  "treiz": "treize", "quatorz": "quatorze", "quinz": "quinze", "seiz": "seize", "vingt": "vingt",
                  "trent": "trente", "quarant": "quarante", "cinquant": "cinquante", "soixant": "soixante",
                  "cent": "cent", "mill": "mille"}
_ORDINAL_WORD = re.compile(rf"\b((?:(?:{_WORD_NUMBER})(?:[- ]et)?[- ])*)({'|'.join(_ORDINAL_STEMS)})iemes?\b")


def _follows(current: int, value: int) -> bool:
    # A number word adds to a run only where French writes it: after a hundred or a thousand, a unit after
    # a ten (« vingt-quatre »), a teen after « soixante » or « quatre-vingt »: « deux trois » is two numbers.
    below = current % 100
    if below == 0:
        return True
    if value < 10:
        return below % 10 == 0 and below >= 20 or below in (10, 70, 90)
    return value < 20 and below in (60, 80)


def _word_values(words: str) -> list[int]:
    """« vingt-six » → [26], « quatre-vingt-dix » → [90], « mille cinq cents » → [1500], « un et deux » → [1, 2]."""
    tokens = re.split(r"[- ]+", words.strip("- "))
    numbers, total, current = [], 0, 0
    for i, w in enumerate(tokens):
        if w == "et":
            # « et » joins « vingt et un », « soixante et onze »; elsewhere it is « and » between two numbers.
            if not (current % 10 == 0 and 20 <= current % 100 <= 60 and tokens[i + 1:i + 2] in (["un"], ["une"],
                                                                                                 ["onze"])):
                numbers.append(total + current)
                total, current = 0, 0
            continue
        if w in _SCALES and _SCALES[w] == 100:
            current = (current or 1) * 100
        elif w in _SCALES:
            total, current = (total + (current or 1)) * _SCALES[w], 0
        elif w in ("vingt", "vingts") and current % 100 == 4:
            current += 76  # quatre-vingt
        elif (total or current) and not _follows(current, _SMALL[w]):
            numbers.append(total + current)  # « deux trois jours »: two numbers
            total, current = 0, _SMALL[w]
        else:
            current += _SMALL[w]
    return numbers + [total + current]


def _spell_out(text: str) -> str:
    """Number words written as digits; « un »/« une » alone only where they count (they are articles first)."""
    text = _ORDINAL_WORD.sub(lambda m: _ordinal(m), text)

    def replace(match):
        words, before = match.group(0), text[max(0, match.start() - 40):match.start()]
        whole, _, decimals = words.partition(" virgule ")
        values = _word_values(whole)
        after = text[match.end():match.end() + 12].lstrip()
        lone = re.split(r"[- ]+", whole.strip("- "))[-1] in ("un", "une")
        counts = _UNIT_AFTER.match(after) or _COUNT_AFTER.match(after) or _COUNT_BEFORE.search(before)
        if words == "neuf" and _ADJECTIVE.search(before):
            return words
        if decimals:
            return f"{values[-1]},{''.join(str(v) for v in _word_values(decimals))}"
        out = [str(v) for v in values]
        if lone and not counts:
            out[-1] = whole.split()[-1]  # the run ends with an article: « en deux un guillemet »
        return (" et " if " et " in whole and len(out) > 1 else " ").join(out)
    return _NUMBER_WORDS.sub(replace, text)


def spell_out(text: str) -> str:
    """Number words written as digits in plain text (``plain``): the one number-word reader, which the
    answer mark reads with too (« vingt-six » → 26, « un mois » → 1 mois, « un salarié » stays, « troisième » → 3e)."""
    return _spell_out(check_text(text, "text"))


def _ordinal(m: re.Match) -> str:
    values = _word_values(m.group(1) + _ORDINAL_STEMS[m.group(2)])
    return f"{values[-1]}e" if len(values) == 1 else m.group(0)


_NUM = r"\d{1,3}(?:[ .]\d{3})+(?:,\d+)?|\d+(?:[,.]\d+)?"
#: One number as written (« 1 500 », « 1.500 », « 2,5 », « 48 »): what ``number_value`` reads.
NUMBER = re.compile(_NUM)
_PATTERNS = [
    ("phone", re.compile(r"(?<![\d,.])0 ?\d(?:[ .]?\d){8}(?![\d,])")),
    ("article", re.compile(r"\b(?:art\.?|articles?) ?((?:l\.? ?|r\.? ?)?\d+(?:[-.]\d+)*)")),
    ("date", re.compile(rf"\b(1er|1re|1e|\d{{1,2}}) ({'|'.join(MONTHS)})\b|\b(\d{{1,2}})/(\d{{1,2}})(?:/\d{{2,4}})?\b")),
    ("time", re.compile(r"(?<![\d,.])(\d{1,2}) ?(?:h|heures?) ?(\d{2})\b")),
    ("ordinal", re.compile(r"(?<![\d,.])(\d+) ?(?:e|eme|er|re)\b")),
    ("number", re.compile(rf"(?<![\w,.])({_NUM})(?: ?(et demie?))?(?: ?(%|€|km/h|[a-z]+\b))?")),
    ("month", re.compile(rf"\b({'|'.join(MONTHS)})\b")),
]


def number_value(number: str) -> str:
    """« 1 500 » → 1500, « 2,5 » → 2.5, « 1.500 » → 1500 (a dot before three digits groups thousands), « 007 » → 7."""
    if re.fullmatch(r"\d{1,3}(?:[ .]\d{3})+(?:,\d+)?", number):
        number = number.replace(" ", "").replace(".", "")
    number = number.replace(",", ".")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return number.lstrip("0") or "0" if "." not in number else number


def _unit_after(word: str | None) -> str | None:
    return UNITS.get(word) if word else None


def figures(text: str | None) -> list[Figure]:
    """Every figure of ``text``, in order: see the module's docstring for what counts and how it is written."""
    # Ordinal words are figures too (« troisième enfant » → 3 e), and « premier mars » a date.
    plain_text = read_numbers(text)
    taken = [False] * len(plain_text)
    found: list[tuple[int, Figure]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(plain_text):
            if any(taken[m.start():m.end()]):
                continue
            figure = _figure(kind, m)
            if figure is None:
                continue
            taken[m.start():m.end()] = [True] * (m.end() - m.start())
            found.append((m.start(), figure))
    return [f for _, f in sorted(found, key=lambda pair: pair[0])]


def _figure(kind: str, m: re.Match) -> Figure | None:
    said = m.group(0).strip()
    if kind == "phone":
        return Figure(said, "tel " + re.sub(r"\D", "", said), None, "phone")
    if kind == "article":
        return Figure(said, "art " + re.sub(r"[ .]", "", m.group(1)), None, "article")
    if kind == "date":
        if m.group(2):
            day = "1" if m.group(1) in ("1er", "1re", "1e") else str(int(m.group(1)))
            return Figure(said, f"{day}/{MONTHS[m.group(2)]:02d}", None, "date")
        day, month = int(m.group(3)), int(m.group(4))
        return Figure(said, f"{day}/{month:02d}", None, "date") if 1 <= day <= 31 and 1 <= month <= 12 else None
    if kind == "time":
        minutes = int(m.group(2))
        if int(m.group(1)) > 23 or minutes > 59:  # « 35 heures 12 » is two figures, not a time
            return None
        return Figure(said, f"{int(m.group(1))}:{minutes:02d}" if minutes else str(int(m.group(1))), "h",
                      "time" if minutes else "duration")
    if kind == "ordinal":
        return Figure(said, str(int(m.group(1))), "e", "ordinal")
    if kind == "month":
        return Figure(said, f"month {MONTHS[m.group(1)]:02d}", None, "month")
    value = number_value(m.group(1))
    if m.group(2):  # « deux jours et demi » is read « 2 et demi jours » after the unit: see below
        value = str(float(value) + 0.5).rstrip("0").rstrip(".")
    unit = _unit_after(m.group(3))
    if unit is None and m.group(3):
        said = m.group(1)  # the word after is not a unit: the figure is the number alone
    elif unit is not None:
        # « 2 jours et demi »: the half comes after the unit.
        tail = m.string[m.end():m.end() + 9]
        if re.match(r" ?et demie?\b", tail):
            value = str(float(value) + 0.5).rstrip("0").rstrip(".")
    kind = {"€": "amount", "%": "percent"}.get(unit, "duration" if unit else "count")
    return Figure(said, value, unit, kind)


def keys(text: str | None) -> set[str]:
    """The figures of ``text`` as compared: what ``supported`` looks them up in."""
    out = set()
    for f in figures(text):
        out.add(f.key)
        if f.kind == "date":  # « 31 mai » also holds the month alone
            out.add(f"month {f.value.split('/')[1]}")
    return out


def supported(figure: Figure, held: set[str]) -> bool:
    """Is ``figure`` among ``held`` (``keys`` of the passages)? The rule is the module docstring's."""
    if figure.key in held:
        return True
    if figure.unit is None:
        # A bare number is the same figure under any unit: « 482 » is held by « 482 salariés » or « 482 ».
        return figure.kind == "count" and any(k.split(" ")[0] == figure.value for k in held if " " in k
                                              and not k.startswith(("tel ", "art ", "month ")))
    # Written bare there (« de 20 à 40 % » writes 20 bare): the passage holds the number; its unit is nearby.
    return figure.unit != "e" and figure.value in held


def unsupported(answer: str | None, passages: list[str]) -> list[str]:
    """The figures of ``answer`` that none of ``passages`` holds, as read (folded, number words in digits), each once."""
    held: set[str] = set()
    for passage in passages:
        held |= keys(passage)
    missing = [f.text for f in figures(answer) if not supported(f, held)]
    return list(dict.fromkeys(missing))
