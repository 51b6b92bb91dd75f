"""No number in a notebook's prose that no output of that notebook shows.

A sentence such as « the règlement intérieur has 1,400 words » or « convex
scores 0.959 » is a claim; the notebook must show it. For every markdown
cell, every number (a score, a count, a percentage) must appear in an output
of the same notebook — rounded, padded or as a percentage, never the other
way round (0.9 shown does not vouch for 0.94) — or in the short allowlist below (constants the text explains rather than
measures). Not checked: numbers inside French quotations « … » (the handbook's
own words), inside inline code or links (a knob's value written as code),
single digits (0–9: « rung 3 », « two legs »), notebook numbers (07), and the « Further reading » section (years and pages of papers).
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
    text = re.sub(r"\b[NQq]\d+\b|\b\d{2}_\w+|\b0\d\b", " ", text)  # rung names, question ids, notebooks (07, 07_…)
    out = []
    for match in NUMBER.finditer(text):
        n = _normal(match.group(1))
        if re.fullmatch(r"\d", n):
            continue
        out.append(n)
    return out


def _shown(nb: dict) -> set[str]:
    """Every number the code and outputs show, in every way it may be quoted: rounded (0.959 → 0.96, 14.4 → 14),
    padded (0.9 → 0.90) or as a percentage (0.24 → 24, 24 → 0.24). Never the other way: 0.9 does not show 0.94."""
    parts = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue  # outputs only: a number written in the code is not a result the reader saw
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append("".join(out["text"]))
            for kind, value in out.get("data", {}).items():
                if kind.startswith("text/"):
                    parts.append("".join(value) if isinstance(value, list) else str(value))
    shown = set()
    for match in NUMBER.finditer("\n".join(parts)):
        shown |= _forms(_normal(match.group(1)))
    return shown


def _forms(n: str) -> set[str]:
    """How a shown number may be written in the prose."""
    x = float(n)
    out = {n} | {f"{x:.{k}f}" for k in range(0, 4)}
    if x <= 1:
        out |= {f"{100 * x:.{k}f}" for k in range(0, 2)}  # 0.24 quoted as 24 %
    if "." not in n and x <= 100:
        out |= {f"{x / 100:.{k}f}" for k in range(1, 4)}  # 24 % quoted as 0.24
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_number_in_the_prose_is_shown(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    shown = _shown(nb)
    allowed = ALLOWED["*"] | ALLOWED.get(path.stem, set())
    missing = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for n in _claims("".join(cell["source"])):
            if n in allowed or n in shown:
                continue
            missing.append(f"cell {index}: {n}")
    assert not missing, f"{path.name}: numbers in the prose that no output shows: {missing}"


def test_the_guard_catches_a_number_no_output_shows():
    nb = {"cells": [{"cell_type": "markdown", "source": ["The règlement has 1,400 words; MRR is 0.959."]},
                    {"cell_type": "code", "source": ["print(n)"], "outputs": [{"text": ["1082 words, MRR 0.939, p 0.9"]}]}]}
    shown = _shown(nb)
    claims = _claims("".join(nb["cells"][0]["source"]))
    assert claims == ["1400", "0.959"]
    assert not any(n in shown for n in claims)
    assert {"0.939", "0.94", "1082", "0.90", "90"} <= shown
    assert "0.94" not in _shown({"cells": [{"cell_type": "code", "source": [""], "outputs": [{"text": ["0.9"]}]}]})
