"""Every measuring term is defined before a reader meets it: the primer first, then whatever uses it.

The primer (``notebooks/01a_measuring_a_ranking.ipynb``) defines each metric
and each test once, under a heading of its own; ``docs/ir-glossary.md`` gives
each a line, an anchor and a link to that heading. Reading order is the
notebooks' names (00, 01, 01a, 02 …). A notebook's prose may use a term once
the primer's heading for it has been read, or from the line where the
notebook links the primer or the glossary on (a link in the header's
navigation line, « Next: the primer », covers that line only); a use before
either is a number the reader has not been taught to read. The primer itself may name a term
before its heading only in a link to that heading (its contents line).

The links must also lead somewhere: every anchor a notebook or a doc points at
in the primer is one of its headings, every anchor into the glossary one of
its entries.
"""

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb"))  # 00, 01, 01a, 02 …: reading order
PRIMER = "01a_measuring_a_ranking.ipynb"
GLOSSARY = REPO / "docs" / "ir-glossary.md"

#: The primer's heading for each term → what a use of the term looks like in prose.
TERMS = {
    "MRR": r"\bMRR\b|(?i:\breciprocal rank)",
    "recall@k": r"(?i:\brecall@(?:\d+|k)\b)",
    "success@k": r"(?i:\bsuccess@(?:\d+|k)\b)",
    "answer@k": r"(?i:\banswer@(?:\d+|k)\b)",
    "nDCG": r"\bn?DCG\b",
    "precision@k": r"(?i:\bprecision@(?:\d+|k)\b)|\bP@\d+\b",
    "AP": r"\b(?:MAP|AP)\b|(?i:\baverage precision\b)",
    "judged@k": r"(?i:\bjudged@(?:\d+|k)\b|\bjudged share\b)",
    "Paired randomization test": r"(?i:\bpaired (?:randomi[sz]ation |sign-flip |permutation )?test"
                                 r"|\brandomi[sz]ation test|\bsign-flip\b)",
    "Bootstrap interval": r"(?i:\bbootstrap)",
    "Holm": r"\bHolm\b",
    "Questions needed": r"(?i:\bquestions[ _]needed\b)",
}
#: Headings the primer has for the glossary to link to, though prose uses their word too often to track it.
OTHER_HEADINGS = ("Judgments",)


def jupyter_anchor(heading: str) -> str:
    """The id JupyterLab and nbconvert give a heading: its text, spaces as hyphens."""
    return heading.strip().replace(" ", "-")


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading in a Markdown file: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def markdown(path: Path) -> list[str]:
    """Each cell's prose, by cell number: a code cell's is empty (its outputs are read by test_prose_numbers)."""
    return ["".join(c["source"]) if c["cell_type"] == "markdown" else ""
            for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]


def _prose(line: str) -> str:
    # Link targets are addresses, not uses: « (01a_measuring_a_ranking.ipynb#Holm) » names no term for a reader.
    return re.sub(r"\]\([^)]*\)", "]", line)


def undefined_uses(notebooks: list[tuple[str, list[str]]]) -> list[str]:
    """« notebook, cell n: term » for every use of a term before the reader was given it (``notebooks`` in order)."""
    defined, found = set(), []
    for name, cells in notebooks:
        primer, linked = name == PRIMER, False
        for n, cell in enumerate(cells):
            in_fence = False
            for line in cell.splitlines():
                if line.lstrip().startswith(("```", "~~~")):
                    in_fence = not in_fence
                if in_fence:
                    continue
                heading = re.fullmatch(r"#{2,4}\s+(.+?)\s*", line)
                if primer and heading and heading.group(1) in TERMS:
                    defined.add(heading.group(1))
                    continue
                here = not primer and bool(re.search(re.escape(PRIMER) + r"|ir-glossary\.md", line))
                # A link in the header is navigation (« Next: the primer »): it covers its own line, not the notebook.
                linked = linked or (here and n > 0)
                for term, use in TERMS.items():
                    if term in defined or linked or here or not re.search(use, _prose(line)):
                        continue
                    if primer and f"](#{jupyter_anchor(term)})" in line:
                        continue  # the primer's own contents line, linking each term to its heading
                    found.append(f"{name}, cell {n}: {term}")
    return list(dict.fromkeys(found))


def reading_order() -> list[tuple[str, list[str]]]:
    return [(p.name, markdown(p)) for p in NOTEBOOKS]


def primer_headings() -> list[str]:
    return [m.group(1) for cell in markdown(REPO / "notebooks" / PRIMER)
            for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", cell, re.M)]


def test_the_primer_has_a_heading_for_every_term():
    headings = primer_headings()
    missing = [t for t in [*TERMS, *OTHER_HEADINGS] if t not in headings]
    assert not missing, f"{PRIMER} has no heading for {missing}"
    assert not [t for t in TERMS if headings.count(t) > 1], "a term is defined once"


def test_every_term_is_defined_before_its_first_use_in_reading_order():
    assert [n for n, _ in reading_order()][:3] == ["00_full_text_search.ipynb", "01_bm25.ipynb", PRIMER]
    found = undefined_uses(reading_order())
    assert not found, ("used before the primer defines it, with no link to the primer or the glossary "
                       f"(link one at first use): {found}")


def test_a_use_before_the_definition_is_caught():
    # Negative controls, planted in the real collection: each must be seen, and only it.
    order = reading_order()
    planted = [(n, [cells[0], "The nDCG@5 of this ranking is high.", *cells[1:]] if n == "01_bm25.ipynb" else cells)
               for n, cells in order]
    assert undefined_uses(planted) == ["01_bm25.ipynb, cell 1: nDCG"]
    linked = [(n, [cells[0], "Its [nDCG@5](../docs/ir-glossary.md#ndcg) is high.", *cells[1:]]
               if n == "01_bm25.ipynb" else cells) for n, cells in order]
    assert undefined_uses(linked) == []
    # The primer using a term above its own heading, not in a link to it.
    moved = [(n, [cells[0], "A first word on Holm.", *cells[1:]] if n == PRIMER else cells) for n, cells in order]
    assert undefined_uses(moved) == [f"{PRIMER}, cell 1: Holm"]
    # A heading removed: every use after it, in the primer and in the notebooks after it, is unexplained.
    unheaded = [(n, [c.replace("### Questions needed\n", "") for c in cells]) for n, cells in order]
    assert any(f.endswith(": Questions needed") for f in undefined_uses(unheaded))


def _glossary_anchors() -> set[str]:
    text = GLOSSARY.read_text(encoding="utf-8")
    return set(re.findall(r'<a id="([^"]+)"', text)) | {github_anchor(h) for h in re.findall(r"^#+\s+(.+)$", text, re.M)}


def test_the_glossary_gives_every_term_an_anchor_and_a_link_to_its_heading():
    text, anchors = GLOSSARY.read_text(encoding="utf-8"), _glossary_anchors()
    for term in [*TERMS, *OTHER_HEADINGS]:
        assert github_anchor(term) in anchors, f"ir-glossary.md has no entry with the anchor #{github_anchor(term)}"
        assert f"{PRIMER}#{jupyter_anchor(term)})" in text, f"ir-glossary.md does not link the primer's « {term} »"


def _links(text: str, target: str) -> list[str]:
    return re.findall(r"\]\((?:[\w./-]*/)?" + re.escape(target) + r"#([^)\s]+)\)", text)


def test_every_link_into_the_primer_or_the_glossary_leads_to_a_heading_or_an_entry():
    primer = {jupyter_anchor(h) for h in primer_headings()}
    glossary = _glossary_anchors()
    texts = {p.name: "\n".join(markdown(p)) for p in NOTEBOOKS}
    texts |= {str(p.relative_to(REPO)): p.read_text(encoding="utf-8")
              for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]}
    broken = [f"{name}: {PRIMER}#{a}" for name, text in texts.items() for a in _links(text, PRIMER) if a not in primer]
    broken += [f"{PRIMER}: #{a}" for a in re.findall(r"\]\(#([^)\s]+)\)", texts[PRIMER]) if a not in primer]
    broken += [f"{name}: ir-glossary.md#{a}" for name, text in texts.items()
               for a in _links(text, "ir-glossary.md") if a not in glossary]
    assert not broken, f"links to no heading: {broken}"


def test_the_link_check_sees_a_broken_anchor():
    assert _links("see [Holm](01a_measuring_a_ranking.ipynb#Holms)", PRIMER) == ["Holms"]
    assert "Holms" not in {jupyter_anchor(h) for h in primer_headings()}
    assert _links("[n](../docs/ir-glossary.md#ndgc)", "ir-glossary.md") == ["ndgc"]
    assert "ndgc" not in _glossary_anchors() and "ndcg" in _glossary_anchors()
