"""No number in a notebook's prose that no output of that notebook shows.

A sentence such as « the règlement intérieur has 1,400 words » or « convex
scores 0.959 » is a claim; the notebook must show it. For every markdown
cell, every number (a score, a count, a percentage) must appear in an output
of the same notebook, or in its code (a knob's value the reader can see being
set), or in the short allowlist below (constants the text explains rather than
measures). Not checked: numbers inside French quotations « … » (the handbook's
own words), inside inline code or links, single digits (0–9: « rung 3 »,
« two legs »), and the « Further reading » section (years and pages of papers).
"""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))

#: Constants the prose explains, not measurements: where they come from is said next to them.
ALLOWED = {
    "*": {"1500", "1000", "60", "2009", "1.2", "0.75", "1e-9", "1e-6", "0.05", "95", "100", "4096", "512", "12"},
}

NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:[  ,]\d{3})+|\d+(?:[.,]\d+)?)(?:\s?%)?(?![\w])")


def _normal(number: str) -> str:
    n = re.sub(r"(?<=\d)[  ,](?=\d{3}\b)", "", number)  # thousands separators: 1,082 and 1 082 are 1082
    return n.replace(",", ".")


def _claims(markdown: str) -> list[str]:
    text = markdown.split("## Further reading")[0].split("## References")[0]
    text = re.sub(r"«[^»]*»", " ", text)             # the handbook's own words
    text = re.sub(r"`[^`]*`", " ", text)              # inline code: a name or a constant shown as code
    text = re.sub(r"\]\([^)]*\)", "]", text)          # link targets
    text = re.sub(r"<[^>]+>", " ", text)              # html tags
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"\b[NQq]\d+\b|\b\d{2}_\w+", " ", text)  # rung names N0…N5, question ids, notebook files
    out = []
    for match in NUMBER.finditer(text):
        n = _normal(match.group(1))
        if re.fullmatch(r"\d", n):
            continue
        out.append(n)
    return out


def _shown(nb: dict) -> str:
    parts = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        parts.append("".join(cell["source"]))
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append("".join(out["text"]))
            for kind, value in out.get("data", {}).items():
                if kind.startswith("text/"):
                    parts.append("".join(value) if isinstance(value, list) else str(value))
    shown = "\n".join(parts)
    return " ".join(_normal(m.group(1)) for m in NUMBER.finditer(shown))


def _variants(n: str) -> set[str]:
    """A number as an output may print it: 0.959 ~ 0.96 ~ 96 (%), 12 ~ 12.0 ~ 12.000."""
    out = {n}
    if "." in n:
        whole, frac = n.split(".")
        out |= {f"{whole}.{frac[:k]}" for k in range(1, len(frac) + 1)}
        out |= {str(round(float(n), k)) for k in range(1, 4)}
        out |= {f"{float(n):.{k}f}" for k in range(1, 4)}
        if float(n) <= 1:
            out |= {f"{100 * float(n):.{k}f}" for k in range(0, 2)}
    else:
        out |= {f"{n}.0", f"{n}.00", f"{n}.000"}
        if int(n) <= 100:
            out |= {f"0.{int(n):02d}", f"{int(n) / 100:.3f}", f"{int(n) / 100:.1f}"}
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_number_in_the_prose_is_shown(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    shown = set(_shown(nb).split())
    allowed = ALLOWED["*"] | ALLOWED.get(path.stem, set())
    missing = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for n in _claims("".join(cell["source"])):
            if n in allowed or _variants(n) & shown:
                continue
            missing.append(f"cell {index}: {n}")
    assert not missing, f"{path.name}: numbers in the prose that no output or code shows: {missing}"


def test_the_guard_catches_a_number_no_output_shows():
    nb = {"cells": [{"cell_type": "markdown", "source": ["The règlement has 1,400 words; MRR is 0.959."]},
                    {"cell_type": "code", "source": ["print(n)"], "outputs": [{"text": ["1082 words, MRR 0.939"]}]}]}
    shown = set(_shown(nb).split())
    claims = _claims("".join(nb["cells"][0]["source"]))
    assert claims == ["1400", "0.959"]
    assert not any(_variants(n) & shown for n in claims)
    assert _variants("0.939") & shown and _variants("1082") & shown
