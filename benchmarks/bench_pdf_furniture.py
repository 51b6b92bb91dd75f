"""Running headers and footers on a real folder's PDFs: what the reader drops, and how many passages carried them.

Run:  .venv/bin/python benchmarks/bench_pdf_furniture.py            # writes benchmarks/results/pdf_furniture.json
      .venv/bin/python benchmarks/bench_pdf_furniture.py --table    # the README's table, from the results

The PDFs are ``benchmarks/folder/documents/**/*.pdf`` (``benchmarks/folder/README.md``). For each
file, from its pages as the reader sees them before anything is left out
(``rungs.yours.readers.pdf.raw_pages``), ``drop_running`` gives every line dropped as a running
header or footer; the results list **every distinct dropped line** as the rule compares them
(``line_key``: digits read as « # »; a number alone keyed by its distance to the PDF page,
« # (page -11) » for a folio printed 11 below the PDF page), with how many times and on how many
pages, its first printed form and a few more, so that a reader can check each one is furniture.
``near_misses`` lists the lines at an edge of 3 pages or more that the rule kept, to read for
what it missed.

Cost: the seconds to read the pages (PDFium, cleaned) and to apply the rule, summed over the files.

Passages: the PDFs are copied to a temporary folder (never written where they are) and indexed
twice with ``index_folder`` (no vectors: the passages are what is counted, at the default size and
overlap), **before** with the rule switched off (``drop_running`` replaced by « drop nothing ») and
**after** with the reader as shipped. A passage carries a running line when one of its lines, read
as the rule reads lines (on the page that line is on), is one its file's rule dropped; a folio
alone is counted apart too. The lines that still match after are listed (``after_matches``): the
same words printed as content (a section's heading under its running head).
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rungs.yours import index as documents  # noqa: E402
from rungs.yours.readers import Unreadable, pdf  # noqa: E402
from rungs.yours.readers.common import contents_like  # noqa: E402

FOLDER = HERE / "folder" / "documents"
OUT = HERE / "results" / "pdf_furniture.json"
FOLIO = "# (page "


def per_file(path: Path) -> dict:
    """What the rule drops from one PDF: every distinct line (by its key), and the near misses."""
    data = path.read_bytes()
    started = time.perf_counter()
    try:
        raw = pdf.raw_pages(data)
    except Unreadable as err:
        return {"pages": None, "unreadable": str(err)}
    read = time.perf_counter() - started
    _, dropped = pdf.drop_running(raw)
    rule = time.perf_counter() - started - read
    contents = {i for i, text in enumerate(raw) if contents_like(text)}
    lines: dict[str, dict] = {}
    for page, line in dropped:
        entry = lines.setdefault(pdf.line_key(line, page), {"lines": 0, "pages": set(), "printed": []})
        entry["lines"] += 1
        entry["pages"].add(page)
        if line not in entry["printed"] and len(entry["printed"]) < 4:
            entry["printed"].append(line)
    edge_pages = collections.defaultdict(set)
    for page, text in enumerate(raw):
        for _, _, key in pdf._edges(text, page):
            edge_pages[key].add(page)
    near = {key: len(pages) for key, pages in edge_pages.items()
            if len(pages) >= pdf.MIN_PAGES and key not in lines}
    out = {"read_s": read, "rule_s": rule, "pages": len(raw), "pages_with_text": sum(1 for t in raw if t.strip()),
           "contents_pages": len(contents), "dropped_lines": len(dropped),
           "pages_with_a_dropped_line": len({p for p, _ in dropped}),
           "distinct": [{"line": key, "lines": e["lines"], "pages": len(e["pages"]),
                         "first_page": min(e["pages"]) + 1, "last_page": max(e["pages"]) + 1,
                         "printed": e["printed"]}
                        for key, e in sorted(lines.items(), key=lambda kv: (-kv[1]["lines"], kv[0]))],
           "near_misses": dict(sorted(near.items(), key=lambda kv: (-kv[1], kv[0])))}
    return out


def passages_of(root: Path, rule_on: bool) -> tuple[list[dict], str]:
    """The PDF passages of an index of ``root`` built with the rule on or off, each with its lines' keys,
    and the index's report."""
    real = pdf.drop_running
    if not rule_on:
        pdf.drop_running = lambda pages: (list(pages), [])  # before: the reader without the rule
    try:
        idx = documents.index_folder(root, index=root.parent / f"index-{rule_on}.sqlite", vectors=False)
        starts = {d["path"]: d.get("page_starts") or [0] for d in idx.documents()}
        out = [p for p in idx.passages() if p["path"].lower().endswith(".pdf")]
        report = str(idx.report)
        idx.close()
    finally:
        pdf.drop_running = real
    for p in out:
        keys, offset = set(), p["start"]
        for line in p["body"].split("\n"):
            page = bisect.bisect_right(starts[p["path"]], offset) - 1  # the page this line is printed on
            keys.add(pdf.line_key(line, page))
            offset += len(line) + 1
        p["keys"] = keys
    return out, report


def carried(passages: list[dict], keys: dict[str, set]) -> dict:
    """How many passages have a line whose key its file's rule dropped (folios alone apart), and which lines."""
    furniture, folio, matches = 0, 0, collections.Counter()
    for p in passages:
        found = p["keys"] & keys.get(p["path"], set())
        heads = {key for key in found if not key.startswith(FOLIO)}
        furniture += bool(found)
        folio += bool(found) and not heads
        matches.update(f"{p['path']}: {key}" for key in found)
    n = len(passages)
    return {"passages": n, "with_running_line": furniture, "share": round(furniture / n, 4) if n else None,
            "with_only_a_folio": folio, "matches": dict(sorted(matches.items(), key=lambda kv: (-kv[1], kv[0])))}


def run() -> dict:
    pdfs = sorted(p for p in FOLDER.rglob("*") if p.suffix.lower() == ".pdf")
    files = {p.relative_to(FOLDER).as_posix(): per_file(p) for p in pdfs}
    keys = {rel: {d["line"] for d in f.get("distinct", [])} for rel, f in files.items()}
    work = Path(tempfile.mkdtemp(prefix="rungs-furniture-"))
    try:
        os.environ["XDG_CACHE_HOME"] = str(work / "xdg")  # « the last index » is noted there, not in yours
        root = work / "documents"
        for p in pdfs:
            (root / p.relative_to(FOLDER)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, root / p.relative_to(FOLDER))
        before = carried(passages_of(root, rule_on=False)[0], keys)
        after_passages, report = passages_of(root, rule_on=True)
        after = carried(after_passages, keys)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    after["after_matches"] = after.pop("matches")
    before.pop("matches")
    return {"date": time.strftime("%Y-%m-%d"), "rule": {"edge": pdf.EDGE, "running_share": pdf.RUNNING_SHARE,
                                                        "min_pages": pdf.MIN_PAGES},
            "pdfs": len(pdfs), "pages": sum(f["pages"] or 0 for f in files.values()),
            "dropped_lines": sum(f.get("dropped_lines", 0) for f in files.values()),
            # reading the pages (PDFium, cleaned) against the rule alone, summed over the files, one run
            "seconds": {"read": round(sum(f.pop("read_s", 0) for f in files.values()), 2),
                        "rule": round(sum(f.pop("rule_s", 0) for f in files.values()), 2)},
            "files_with_drops": sum(1 for f in files.values() if f.get("dropped_lines")),
            "distinct_lines": sum(len(f.get("distinct", [])) for f in files.values()),
            "passages": {"before": before, "after": after},
            "report_line": next((line for line in report.splitlines() if line.startswith("boilerplate")), ""),
            "files": files}


def table(r: dict) -> str:
    b, a = r["passages"]["before"], r["passages"]["after"]
    lines = ["| | before | after |", "|---|---:|---:|",
             f"| PDF passages | {b['passages']:,} | {a['passages']:,} |",
             f"| carrying a running line | {b['with_running_line']} ({100 * b['share']:.1f} %) | "
             f"{a['with_running_line']} ({100 * a['share']:.1f} %) |",
             f"| of which a folio alone | {b['with_only_a_folio']} | {a['with_only_a_folio']} |", "",
             "| file | pages | lines dropped | distinct | pages with one |", "|---|---:|---:|---:|---:|"]
    for rel, f in r["files"].items():
        if f.get("dropped_lines"):
            lines.append(f"| `{rel}` | {f['pages']} | {f['dropped_lines']} | {len(f['distinct'])} | "
                         f"{f['pages_with_a_dropped_line']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--table", action="store_true", help="print the README's table from the results and stop")
    args = parser.parse_args()
    if not args.table:
        OUT.write_text(json.dumps(run(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(table(json.loads(OUT.read_text(encoding="utf-8"))))


if __name__ == "__main__":
    main()
