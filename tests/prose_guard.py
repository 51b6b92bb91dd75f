"""What the prose guard reads: the numbers a text claims, and the numbers the collection shows.

A number in prose — a notebook's markdown, the README, ``docs/``,
``benchmarks/README.md``, a docstring of the package — is a claim. It is
vouched for when something a reader can see shows it: an output of a
committed notebook, or a committed results file of ``benchmarks/results/``
(what a benchmark wrote when it ran), or the package's own constants (a
default written as code: ``MAX_CHARS = 1500``). Shown numbers may be quoted
rounded (0.959 → 0.96), padded (0.9 → 0.90) or as a percentage (0.24 → 24 %),
never the other way round (0.9 shown does not vouch for 0.94). A results file
shows what its benchmark printed from it: the tables a benchmark renders from
its committed JSON (``RENDERED``) and, for a ``.jsonl``, its number of records
(one a line: « nine of the 775 answers »). A notebook's stated times (its
first cell's « Core …: about X minutes ») are shown to the docs that plan
with them; ``tests/test_lessons.py`` holds them to the notebook's own prose.

Pooled, the shown numbers of every output and results file cover almost every
two-decimal number (0.58, 0.64, 14.0 are all shown somewhere). So a docstring
paragraph that names where its numbers come from — « notebook 02 shows it »,
« N3 », ``results/answers.json`` — is held to those sources alone
(``named_sources``); only a paragraph that names none is held to everything.

Not claims: single digits (0–9), numbers inside French quotations « … » (the
handbook's own words), inline code and code blocks, links, rung and question
names (N3, q002), notebook numbers (07), version numbers (3.11, 0.3.36),
years, issue numbers (« llama.cpp issue 20824 »: a name), the clock times of a
schedule (9:30, 0:15 — sums of stated times), and the « Further reading »
sections. Inline code is ``single`` or ``double`` backticks (Markdown and the
docstrings' reStructuredText): a file mode, a limit or an example written as
code is a constant shown, not a measurement. Numbers written as words
(« twelve », « fifteen », « a hundred ») are claims too.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:[  ,]\d{3})+|\d+(?:[.,]\d+)?)(?:\s?%)?(?![\w])")

#: Number words a sentence may spell out (English; French sits inside « » or in the handbook's own text).
WORDS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
         "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
         "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000}
_WORD = re.compile(r"\b(?:(a|one|two|three|four|five|six|seven|eight|nine)\s+)?(" + "|".join(WORDS) + r")"
                   r"(?:-(one|two|three|four|five|six|seven|eight|nine)\b)?\b",
                   re.IGNORECASE)
_SMALL = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def normal(number: str) -> str:
    n = re.sub(r"(?<=\d)[  ,](?=\d{3}\b)", "", number)  # thousands separators: 1,082 and 1 082 are 1082
    return n.replace(",", ".")


def strip_markdown(text: str) -> str:
    """The words of a text that make claims: no quotations, code, links, tags, names or references."""
    text = re.split(r"^#+ *(Further reading|References)\b", text, flags=re.M)[0]
    text = re.sub(r"```.*?```", " ", text, flags=re.S)      # code blocks
    text = re.sub(r"«[^»]*»", " ", text)                    # the handbook's own words
    text = re.sub(r"``.+?``|`[^`]*`", " ", text, flags=re.S)  # inline code, Markdown `x` or docstrings' ``x``
    text = re.sub(r"\]\([^)]*\)", "]", text)                # link targets
    text = re.sub(r"<[^>]+>", " ", text)                    # html tags
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"\b[NQq]\d+\b|\b\d{2}_\w+|\b0\d\b", " ", text)  # rung names, question ids, notebooks (07, 07_…)
    text = re.sub(r"\b\d+(?:\.\d+){2,}\b", " ", text)       # versions: 0.3.36, 3.11.7
    text = re.sub(r"\b(?:19|20)\d\d\b", " ", text)          # years
    text = re.sub(r"\bissues? #?\d+", " ", text, flags=re.I)  # an issue's number names it: « llama.cpp issue 20824 »
    text = re.sub(r"(?<![\d.])\d{1,2}:\d\d(?:[–-]\d{1,2}:\d\d)?(?![\d:])", " ", text)  # a schedule's clock: 9:30–10:15
    return text


def claims(text: str) -> list[str]:
    """Every number the text states, digits or words, as normalised strings (single digits left out)."""
    text = strip_markdown(text)
    out = [n for n in (normal(m.group(1)) for m in NUMBER.finditer(text)) if not re.fullmatch(r"\d", n)]
    for m in _WORD.finditer(text):
        value = WORDS[m.group(2).lower()] * (_SMALL[m.group(1).lower()] if m.group(1) else 1)
        value += _SMALL[m.group(3).lower()] if m.group(3) else 0  # twenty-five is 25, not 20
        out.append(str(value))
    return out


def forms(n: str) -> set[str]:
    """How a shown number may be written in prose: as shown, rounded, padded, or as a percentage."""
    x = float(n)
    out = {n} | {f"{x:.{k}f}" for k in range(0, 4)}
    if x <= 1:
        out |= {f"{100 * x:.{k}f}" for k in range(0, 2)}  # 0.24 quoted as 24 %
    if "." not in n and x <= 100:
        out |= {f"{x / 100:.{k}f}" for k in range(1, 4)}  # 24 % quoted as 0.24
    return out


def shown_in(texts) -> set[str]:
    shown = set()
    for text in texts:
        for match in NUMBER.finditer(text):
            shown |= forms(normal(match.group(1)))
    return shown


def notebook_outputs(nb: dict) -> list[str]:
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
    return parts


RESULTS = REPO / "benchmarks" / "results"

#: Results whose benchmark renders its tables from the committed file (ratios, sums, medians of rounds):
#: file name → (the benchmark's module beside it, how its own renderer is called on the loaded JSON).
RENDERED = {"peers.json": ("bench_peers", lambda bench, data: bench.markdown(data["rows"], data["meta"]))}


def results_texts(results: Path = RESULTS) -> list[str]:
    """Every committed benchmark result, as text (JSON numbers are shown numbers), with what is read off it:
    a ``.jsonl``'s count of records and the tables its benchmark renders from it."""
    return [text for path in sorted(results.glob("*")) for text in results_texts_of(path)]


def results_texts_of(path: Path) -> list[str]:
    if path.suffix not in (".json", ".jsonl", ".md", ".txt", ".csv"):
        return []
    text = path.read_text(encoding="utf-8")
    out = [_json_numbers(text)]
    if path.suffix == ".jsonl":
        out.append(f"{sum(1 for line in text.splitlines() if line.strip())} records")
    if path.name in RENDERED:
        out.append(rendered(path))
    return out


def rendered(path: Path) -> str:
    """A committed results file as its benchmark prints it: the benchmark's own renderer, never a copy of it."""
    import importlib.util

    module, render = RENDERED[path.name]
    spec = importlib.util.spec_from_file_location(module, REPO / "benchmarks" / f"{module}.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return render(bench, json.loads(path.read_text(encoding="utf-8")))


#: How a lesson states its times in its first cell (the form ``tests/test_lessons.py`` parses).
STATED = re.compile(r"\*\*(Core|Going further)[^*]*: about (\d+) minutes\*\*")


def stated_times(nb: dict) -> list[str]:
    """A notebook's stated core and « going further » minutes, as written in its first cell (none: not sized yet)."""
    first = nb["cells"][0] if nb["cells"] else {"source": []}
    return [m.group(0) for m in STATED.finditer("".join(first["source"]))]


def _json_numbers(text: str) -> str:
    # 0.6027777 in a JSON file is shown as itself and as its roundings; long floats are cut to 6 places.
    return re.sub(r"(\d+\.\d{6})\d+", r"\1", text)


def constants() -> set[str]:
    """Numbers the package names as its own constants or defaults: a module-level ``MAX_CHARS = 1500``, a
    keyword default ``k=60``, a knob's default in a ``defaults``/``KNOBS``/``DEFAULTS`` table. Not every
    literal of the code: a number buried in an expression vouches for nothing the prose says."""
    found = set()
    for path in (REPO / "rungs").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        values = []
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id.isupper() for t in targets):
                    values.append(node.value)
        for node in ast.walk(tree):
            if isinstance(node, ast.arguments):
                values += [d for d in node.defaults + node.kw_defaults if d is not None]
            elif isinstance(node, ast.ClassDef):
                values += [n.value for n in node.body if isinstance(n, ast.Assign)
                           and any(isinstance(t, ast.Name) and t.id in ("defaults", "OWN") for t in n.targets)]
        for value in values:
            for leaf in ast.walk(value):
                if isinstance(leaf, ast.Constant) and isinstance(leaf.value, (int, float)) and \
                        not isinstance(leaf.value, bool) and abs(leaf.value) < 1e12:
                    found |= forms(repr(leaf.value))
    return found


def docstrings(path: Path) -> list[tuple[str, str]]:
    """(where, text) for every docstring of a module: the module's, each class's, each function's."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((getattr(node, "name", "module"), _no_doctest(doc)))
    return out


def _no_doctest(doc: str) -> str:
    # Doctest lines and their expected output are code, run by their own test.
    lines, skip = [], False
    for line in doc.splitlines():
        if line.strip().startswith(">>>"):
            skip = True
            continue
        if skip and line.strip():
            continue
        skip = False
        lines.append(line)
    return "\n".join(lines)


def named_sources(paragraph: str) -> tuple[set[str], set[str]]:
    """The notebooks (« notebook 02 », « N2 », ``02_hybrid_search.ipynb``) and results files
    (``results/answers.json``) a paragraph names as where its numbers come from."""
    notebooks = set(re.findall(r"\bnotebooks?\s+(\d\d)\b", paragraph)) | set(re.findall(r"\b(\d\d)_\w+\.ipynb", paragraph))
    notebooks |= {"0" + d for d in re.findall(r"\bN(\d)\b", paragraph)}
    return notebooks, set(re.findall(r"results/([\w.-]+\.(?:jsonl?|md|csv|txt))", paragraph))


def paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]
