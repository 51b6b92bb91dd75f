"""Which PDF reader should read a learner's PDFs?  Measured, not guessed.

Every PDF given (a folder is searched recursively) is read page by page by each
reader, each (reader, file) in its own fresh child process, one at a time, so
that time and peak memory belong to that reader alone and the ratios of one run
are comparable:

    pypdf           PdfReader(...).pages[i].extract_text()
    pypdf-layout    the same with extraction_mode="layout"
    pdfminer        pdfminer.six, TextConverter + LAParams() per page
    pdfplumber      page.extract_text() (pdfminer underneath, its own word grouping)
    pypdfium2       PDFium: page.get_textpage().get_text_range()
    pdftotext       poppler's command (UTF-8, default mode), pages split on form feeds

Measured per (reader, file), then summed per reader:

    run_together   share of letters in « words » (maximal runs of letters) of 25+ letters
    empty_pages    pages with no letter; lost_pages: empty for this reader, 50+ letters for another
    attribution    of the page-unique words of a reference reader (pdftotext; pypdfium2 as
                   the reference for pdftotext itself) found on page i, the share whose
                   reference page is i
    agreement      token F1 against the same reference (letters words of 3+ letters, NFKC, lower case)
    seconds/page   extraction time only (after import and open), wall clock
    peak_mb        peak resident memory of the child (interpreter + library + file)
    ligatures      U+FB00–FB06 characters per 10,000 letters
    hyphens        line-end hyphenations left in (letter, hyphen, line break, lower-case letter)
                   per 1,000 words; soft hyphens and PDFium's U+FFFE/U+0002 counted apart
    junk           control, private-use, unassigned and replacement characters per 10,000 letters
    one_letter     share of tokens that are one letter (the opposite failure: letters spaced apart)
    outline        bookmarks read and mapped to a page number (pypdf, pypdfium2, pdfminer;
                   pdfplumber goes through pdfminer's document; poppler's command has none)

Usage (the peers are not rungs' dependencies: pip install pdfminer.six pdfplumber, apt-get install poppler-utils;
a reader that is not installed is an error in its rows, not a stop):
    .venv/bin/python benchmarks/bench_pdf_readers.py benchmarks/folder/documents [MORE_PDFS ...]
    .venv/bin/python benchmarks/bench_pdf_readers.py --metrics-only     # recompute from the saved texts
    .venv/bin/python benchmarks/bench_pdf_readers.py --table            # the README's table, from the results

Writes OUT/texts/<reader>/<file-id>.json (the pages: hundreds of MB, so OUT defaults to the machine's
cache, $XDG_CACHE_HOME/rungs/pdf-readers, never the repository) and benchmarks/results/pdf_readers.json
and .md. Files are named by their path relative to the common root.

The committed results (2026-12-01) are one run on 35 unique PDFs, 2,506 pages: the 23 of
benchmarks/folder/documents/ (20 unique) and 15 more from the same registries, named in the results
by package: Debian 12's texlive-lang-french 2022.20230122-1 (usr/share/doc/texlive-doc/…: Apprends_LaTeX,
ProfLycee-doc, efrench, f-natbib, fbook, formation-latex-ul and its -diapos, frenchb, letgut, lshort-fr,
tdsfrmath, visualFAQ-fr) and pypdf 7.1.1's sdist (resources/: encrypted_doc_no_id, example, issue-604).
Fetch them with `apt-get download texlive-lang-french && dpkg -x …` and `pip download --no-binary :all:
pypdf==7.1.1` to run it again on the same set.
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

READERS = ["pypdf", "pypdf-layout", "pdfminer", "pdfplumber", "pypdfium2", "pdftotext"]
LONG = 25
WORD = re.compile(r"[^\W\d_]+")
HYPHEN_EOL = re.compile(r"[^\W\d_]-[ \t]*\r?\n[ \t]*[a-zà-ÿœæ]")
SOFT = re.compile(r"[\u00ad\ufffe\u0002]")
LIG = re.compile(r"[\ufb00-\ufb06]")
# accents left apart from their letter: a spacing accent glued to a letter (« m^eme », « ´ecrit »)
SPACING_ACCENT = re.compile(r"(?<=[^\W\d_])[\^\u00a8\u00b4`\u02c6\u02dc\u00b8\u02c7\u02d8\u02d9\u02da]|[\^\u00a8\u00b4`\u02c6\u02dc\u00b8\u02c7\u02d8\u02d9\u02da](?=[^\W\d_])")


# --------------------------------------------------------------------------- worker (child)
def _pypdf(path, layout=False):
    import logging
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    from pypdf import PdfReader
    r = PdfReader(path)
    if r.is_encrypted:
        r.decrypt("")
    t0 = time.perf_counter()
    pages = []
    for p in r.pages:
        try:
            pages.append(p.extract_text(extraction_mode="layout") if layout else p.extract_text())
        except Exception as e:  # one bad page is one empty page, said so
            pages.append(None)
    return pages, time.perf_counter() - t0


def _pdfminer(path):
    import io
    import logging
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    from pdfminer.converter import TextConverter
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    t0 = time.perf_counter()
    pages = []
    rm = PDFResourceManager()
    with open(path, "rb") as f:
        for page in PDFPage.get_pages(f, check_extractable=False):
            buf = io.StringIO()
            dev = TextConverter(rm, buf, laparams=LAParams())
            try:
                PDFPageInterpreter(rm, dev).process_page(page)
                pages.append(buf.getvalue())
            except Exception:
                pages.append(None)
            dev.close()
    return pages, time.perf_counter() - t0


def _pdfplumber(path):
    import logging
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    import pdfplumber
    pages = []
    with pdfplumber.open(path) as pdf:
        t0 = time.perf_counter()
        for p in pdf.pages:
            try:
                pages.append(p.extract_text())
            except Exception:
                pages.append(None)
            p.close()  # frees the page's cached objects (pdfplumber ≥ 0.11)
    return pages, time.perf_counter() - t0


def _pypdfium2(path):
    import pypdfium2 as pdfium
    pdf = pdfium.PdfDocument(path)
    t0 = time.perf_counter()
    pages = []
    for i in range(len(pdf)):
        page = pdf[i]
        tp = page.get_textpage()
        pages.append(tp.get_text_range())
        tp.close()
        page.close()
    return pages, time.perf_counter() - t0


def _pdftotext(path):
    t0 = time.perf_counter()
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", path, "-"], capture_output=True, check=True).stdout
    pages = out.decode("utf-8", "replace").split("\f")
    if pages and pages[-1].strip() == "":
        pages = pages[:-1]
    return pages, time.perf_counter() - t0


def _outline_pypdf(path):
    from pypdf import PdfReader
    r = PdfReader(path)
    items = []

    def walk(node, level):
        for o in node:
            if isinstance(o, list):
                walk(o, level + 1)
                continue
            try:
                page = r.get_destination_page_number(o)
            except Exception:
                page = None
            items.append({"level": level, "title": str(o.title), "page": None if page is None or page < 0 else page + 1})
    try:
        walk(r.outline, 1)
    except Exception as e:
        return {"error": repr(e)[:200], "items": items}
    return {"items": items}


def _outline_pypdfium2(path):
    import pypdfium2 as pdfium
    pdf = pdfium.PdfDocument(path)
    items = []
    for it in pdf.get_toc():  # pypdfium2 5.x: PdfBookmark.get_title(), .get_dest().get_index()
        dest = it.get_dest()
        pi = dest.get_index() if dest is not None else None
        items.append({"level": it.level + 1, "title": it.get_title(), "page": None if pi is None else pi + 1})
    return {"items": items}


def _outline_pdfminer(path):
    from pdfminer.pdfdocument import PDFDocument, PDFNoOutlines
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1
    from pdfminer.psparser import PSLiteral
    with open(path, "rb") as f:
        doc = PDFDocument(PDFParser(f))
        pageno = {p.pageid: i + 1 for i, p in enumerate(PDFPage.create_pages(doc))}
        items = []

        def page_of(dest):
            dest = resolve1(dest)
            if isinstance(dest, (str, bytes, PSLiteral)):
                name = dest.name if isinstance(dest, PSLiteral) else dest
                try:
                    dest = resolve1(doc.get_dest(name))
                except Exception:
                    return None
            if isinstance(dest, dict):
                dest = resolve1(dest.get("D"))
            if isinstance(dest, list) and dest:
                ref = dest[0]
                return pageno.get(getattr(ref, "objid", None))
            return None
        try:
            for level, title, dest, action, _ in doc.get_outlines():
                page = None
                if dest is not None:
                    page = page_of(dest)
                elif action is not None:
                    a = resolve1(action)
                    if isinstance(a, dict) and a.get("D") is not None:
                        page = page_of(a.get("D"))
                items.append({"level": level, "title": title if isinstance(title, str) else repr(title), "page": page})
        except PDFNoOutlines:
            pass
        except Exception as e:
            return {"error": repr(e)[:200], "items": items}
    return {"items": items}


EXTRACT = {"pypdf": _pypdf, "pypdf-layout": lambda p: _pypdf(p, layout=True), "pdfminer": _pdfminer,
           "pdfplumber": _pdfplumber, "pypdfium2": _pypdfium2, "pdftotext": _pdftotext}
OUTLINE = {"pypdf": _outline_pypdf, "pypdfium2": _outline_pypdfium2, "pdfminer": _outline_pdfminer}


def worker(reader, path, out):
    # import the library before the clock starts: a command pays it once per run
    __import__({"pypdf": "pypdf", "pypdf-layout": "pypdf", "pdfminer": "pdfminer.high_level", "pdfplumber": "pdfplumber",
                "pypdfium2": "pypdfium2", "pdftotext": "subprocess"}[reader])
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {"reader": reader, "path": path}
    try:
        pages, secs = EXTRACT[reader](path)
        result.update(pages=pages, seconds=secs)
    except Exception as e:
        result.update(error=f"{type(e).__name__}: {e}"[:300], pages=[], seconds=None)
    if reader in OUTLINE:
        try:
            result["outline"] = OUTLINE[reader](path)
        except Exception as e:
            result["outline"] = {"error": repr(e)[:200], "items": []}
    rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    result["peak_mb"] = round(rss / 1024, 1)
    result["base_mb"] = round(base / 1024, 1)
    Path(out).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


# --------------------------------------------------------------------------- metrics
def words(text):
    return WORD.findall(unicodedata.normalize("NFKC", text or ""))


ACCENTS = re.compile(r"[\^\u00a8\u00b4`\u02c6\u02dc\u00b8\u02c7\u02d8\u02d9\u02da\u0300-\u036f]")
CID = re.compile(r"\(cid:\d+\)")


def tokens(text, minlen=3):
    """Words for comparing readers: NFKD, accents dropped (combining or spacing, so « r´ealiser »,
    « re\u0301aliser » and « réaliser » are one word), lower case.  Accent damage is measured apart."""
    # spacing accents go first: NFKD would turn « ´ » into a space + U+0301 and split the word
    t = ACCENTS.sub("", unicodedata.normalize("NFKD", ACCENTS.sub("", CID.sub(" ", text or ""))))
    return [w.lower() for w in WORD.findall(t) if len(w) >= minlen]


def page_metrics(pages):
    letters = long_letters = nwords = one = 0
    lig = hyph = soft = junk = empty = combining = spacing = 0
    for t in pages:
        t = t or ""
        junk += 8 * len(CID.findall(t))  # pdfminer's « (cid:17) »: a glyph with no Unicode, counted as junk
        t = CID.sub(" ", t)
        ws = WORD.findall(t)  # not NFKC: ligatures stay visible
        n = sum(len(w) for w in ws)
        letters += n
        long_letters += sum(len(w) for w in ws if len(w) >= LONG)
        nwords += len(ws)
        one += sum(1 for w in ws if len(w) == 1)
        lig += len(LIG.findall(t))
        combining += sum(1 for c in t if unicodedata.category(c) == "Mn")
        spacing += len(SPACING_ACCENT.findall(t))
        hyph += len(HYPHEN_EOL.findall(t))
        soft += len(SOFT.findall(t))
        junk += sum(1 for c in t if c not in "\n\r\t\f\u00ad\ufffe\u0002"
                    and (unicodedata.category(c) in ("Cc", "Co", "Cn", "Cs") or c == "\ufffd"))
        if n == 0:
            empty += 1
    return dict(letters=letters, long_letters=long_letters, words=nwords, one_letter=one, ligatures=lig,
                hyphens=hyph, soft_hyphens=soft, junk=junk, empty_pages=empty, pages=len(pages),
                combining=combining, spacing_accents=spacing)


def attribution(pages, ref_pages):
    """Share of this reader's page-i words, unique to one page in the reference, that the reference puts on page i."""
    where = collections.defaultdict(set)
    for i, t in enumerate(ref_pages):
        for w in set(tokens(t, 5)):
            where[w].add(i)
    unique = {w: next(iter(s)) for w, s in where.items() if len(s) == 1}
    matched = correct = 0
    offsets = collections.Counter()
    for i, t in enumerate(pages):
        for w in set(tokens(t, 5)):
            if w in unique:
                matched += 1
                correct += unique[w] == i
                offsets[unique[w] - i] += 1
    return matched, correct, offsets


def f1(pages, ref_pages):
    a = collections.Counter(w for t in pages for w in tokens(t))
    b = collections.Counter(w for t in ref_pages for w in tokens(t))
    inter = sum((a & b).values())
    if not a or not b:
        return 0.0 if (a or b) else None
    p, r = inter / sum(a.values()), inter / sum(b.values())
    return 0.0 if inter == 0 else 2 * p * r / (p + r)


def compute(out: Path, files: list[str], readers: list[str]):
    per = {}
    for fid in files:
        per[fid] = {}
        for r in readers:
            p = out / "texts" / r / (safe(fid) + ".json")
            if p.exists():
                per[fid][r] = json.loads(p.read_text(encoding="utf-8"))
    rows = []
    for fid in files:
        res = per[fid]
        any_pages = max((len(v.get("pages") or []) for v in res.values()), default=0)
        letters_by_reader = {r: [sum(len(w) for w in WORD.findall(CID.sub(" ", t or ""))) for t in v.get("pages") or []]
                             for r, v in res.items()}
        for r, v in res.items():
            pages = v.get("pages") or []
            m = page_metrics(pages)
            ref_name = "pypdfium2" if r == "pdftotext" else "pdftotext"
            ref = (res.get(ref_name) or {}).get("pages") or []
            matched, correct, offs = attribution(pages, ref) if ref and len(ref) == len(pages) else (0, 0, collections.Counter())
            lost = 0
            for i in range(len(pages)):
                mine = letters_by_reader[r][i] if i < len(letters_by_reader[r]) else 0
                others = [letters_by_reader[o][i] for o in letters_by_reader if o != r and i < len(letters_by_reader[o])]
                if mine == 0 and others and max(others) >= 50:
                    lost += 1
            ol = v.get("outline")
            m.pop("pages")
            row = dict(file=fid, reader=r, error=v.get("error"), pages=len(pages), pages_expected=any_pages,
                       seconds=v.get("seconds"), peak_mb=v.get("peak_mb"), base_mb=v.get("base_mb"),
                       reference=ref_name if ref else None, matched=matched, correct=correct,
                       top_offset=(offs.most_common(1)[0][0] if offs else None),
                       agreement=f1(pages, ref) if ref else None, lost_pages=lost, **m)
            if ol is not None:
                items = ol.get("items") or []
                row["outline_items"] = len(items)
                row["outline_mapped"] = sum(1 for it in items if it.get("page"))
                row["outline_error"] = ol.get("error")
            rows.append(row)
    # files every reader read without error, and whose text is not mostly junk for all of them
    def readable(fid):
        rr = [x for x in rows if x["file"] == fid]
        if len(rr) != len(readers) or any(x["error"] for x in rr):
            return False
        return min(x["junk"] / max(x["letters"] + x["junk"], 1) for x in rr) < 0.05
    common = {f for f in files if readable(f)}
    summary = summarize([x for x in rows if x["file"] in common], readers)
    summary_all = summarize(rows, readers)
    unreadable = sorted(set(files) - common)
    return rows, {"common": summary, "all": summary_all, "common_files": sorted(common), "excluded_files": unreadable}


def summarize(rows, readers):
    summary = {}
    for r in readers:
        rr = [x for x in rows if x["reader"] == r]
        if not rr:
            continue
        tot = lambda k: sum((x.get(k) or 0) for x in rr)
        pages = tot("pages")
        secs = [x["seconds"] for x in rr if x["seconds"] is not None]
        worst = sorted(((x["long_letters"] / x["letters"] if x["letters"] else 0, x["file"]) for x in rr), reverse=True)
        summary[r] = dict(
            files=len(rr), errors=sum(1 for x in rr if x["error"]), pages=pages,
            run_together=tot("long_letters") / max(tot("letters"), 1),
            files_over_2pct=sum(1 for x in rr if x["letters"] and x["long_letters"] / x["letters"] > 0.02),
            worst_file=worst[0] if worst else None,
            empty_pages=tot("empty_pages"), lost_pages=tot("lost_pages"),
            attribution=tot("correct") / max(tot("matched"), 1), matched=tot("matched"),
            agreement_mean=(sum(x["agreement"] for x in rr if x["agreement"] is not None) /
                            max(1, sum(1 for x in rr if x["agreement"] is not None))),
            seconds=sum(secs), seconds_per_page=sum(secs) / max(pages, 1),
            peak_mb_max=max((x["peak_mb"] or 0) for x in rr),
            peak_mb_median=sorted((x["peak_mb"] or 0) for x in rr)[len(rr) // 2],
            ligatures_per_10k=1e4 * tot("ligatures") / max(tot("letters"), 1),
            hyphens_per_1k_words=1e3 * tot("hyphens") / max(tot("words"), 1),
            soft_hyphens=tot("soft_hyphens"),
            junk_per_10k=1e4 * tot("junk") / max(tot("letters"), 1),
            combining_per_10k=1e4 * tot("combining") / max(tot("letters"), 1),
            spacing_accents_per_10k=1e4 * tot("spacing_accents") / max(tot("letters"), 1),
            one_letter_share=tot("one_letter") / max(tot("words"), 1),
            letters=tot("letters"),
        )
        if any("outline_items" in x for x in rr):
            summary[r]["outline_files"] = sum(1 for x in rr if x.get("outline_items"))
            summary[r]["outline_items"] = tot("outline_items")
            summary[r]["outline_mapped"] = tot("outline_mapped")
    return summary


def safe(fid):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", fid) + "-" + hashlib.sha1(fid.encode()).hexdigest()[:6]


def _table(summary, L):
    L.append("| reader | run-together letters (25+) | files > 2 % | empty pages | lost pages | page attribution | agreement (token F1) | s / page | peak MB (median / max) | ligatures / 10k letters | line-end hyphens / 1k words | soft-hyphen marks | junk / 10k letters | combining accents / 10k | loose spacing accents / 10k | 1-letter tokens | outline entries mapped | errors |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r, s in summary.items():
        ol = f"{s['outline_mapped']}/{s['outline_items']} ({s['outline_files']} files)" if "outline_items" in s else "—"
        L.append(f"| {r} | {100*s['run_together']:.2f} % | {s['files_over_2pct']} | {s['empty_pages']} | {s['lost_pages']} | "
                 f"{100*s['attribution']:.2f} % | {s['agreement_mean']:.3f} | {s['seconds_per_page']*1000:.1f} ms | "
                 f"{s['peak_mb_median']:.0f} / {s['peak_mb_max']:.0f} | {s['ligatures_per_10k']:.2f} | {s['hyphens_per_1k_words']:.2f} | {s['soft_hyphens']} | "
                 f"{s['junk_per_10k']:.2f} | {s['combining_per_10k']:.2f} | {s['spacing_accents_per_10k']:.2f} | {100*s['one_letter_share']:.1f} % | {ol} | {s['errors']} |")


def warn(x):
    """The per-file warning rule proposed in REPORT.md, applied to one reader's output of one file."""
    why = []
    if x["error"]:
        why.append("error: " + x["error"][:40])
    if x["letters"] and x["long_letters"] / x["letters"] > 0.02:
        why.append(f"run-together {100*x['long_letters']/x['letters']:.0f} %")
    if x["pages"] and x["empty_pages"] / x["pages"] > 0.5:
        why.append(f"{x['empty_pages']}/{x['pages']} pages without text")
    if (x["letters"] + x["junk"]) and x["junk"] / (x["letters"] + x["junk"]) > 0.05:
        why.append("unreadable glyphs")
    if x["letters"] and x["spacing_accents"] / x["letters"] > 0.002:
        why.append("accents apart")
    return ", ".join(why)


def markdown(rows, summary, files, meta):
    L = []
    n_common = len(summary["common_files"])
    pages_common = sum(max((x["pages"] for x in rows if x["file"] == f), default=0) for f in summary["common_files"])
    L.append(f"# PDF readers, measured on {len(files)} real PDFs ({meta['pages']} pages)\n")
    L.append(f"One run, {meta['date']}, {meta['machine']}; each (reader, file) in a fresh child process, one at a time. "
             "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".\n")
    L.append(f"## The {n_common} files every reader read ({pages_common} pages)\n")
    _table(summary["common"], L)
    L.append("\nPage attribution and agreement compare accent-free words (NFKD, accents dropped) with pdftotext's, "
             "and pdftotext's with pypdfium2's. « lost pages »: no letter from this reader where another reader found 50 or more. "
             "« loose spacing accents »: ´ ` ¨ ^ ˜ ¸ ˇ glued to a letter (« r´ealiser »), which NFC cannot repair; "
             "« combining accents » (e + U+0301) NFC does repair.\n")
    L.append(f"## All {len(files)} files, including the excluded ones: " + ", ".join(summary["excluded_files"]) + "\n")
    _table(summary["all"], L)
    readers = list(summary["all"])
    by = collections.defaultdict(dict)
    for x in rows:
        by[x["file"]][x["reader"]] = x
    L.append("\n## Run-together share per file (letters in 25+-letter words)\n")
    L.append("| file | pages | producer | " + " | ".join(readers) + " |")
    L.append("|---|---|---|" + "---|" * len(readers))
    for fid in files:
        cells = []
        for r in readers:
            x = by[fid].get(r)
            if not x:
                cells.append("—")
            elif x["error"]:
                cells.append("error")
            elif not x["letters"]:
                cells.append("no text")
            else:
                cells.append(f"{100*x['long_letters']/x['letters']:.1f} %")
        pg = max((x["pages"] for x in by[fid].values()), default=0)
        L.append(f"| {fid} | {pg} | {meta['producers'].get(fid, '')} | " + " | ".join(cells) + " |")
    L.append("\n## Warnings the proposed rule would print, per file and reader\n")
    L.append("| file | " + " | ".join(readers) + " |")
    L.append("|---|" + "---|" * len(readers))
    for fid in files:
        cells = [warn(by[fid][r]) if r in by[fid] else "—" for r in readers]
        if any(cells):
            L.append(f"| {fid} | " + " | ".join(c or "·" for c in cells) + " |")
    L.append("\n## Outlines (bookmarks): entries read / mapped to a page\n")
    ol_readers = [r for r in readers if any("outline_items" in by[f].get(r, {}) for f in files)]
    L.append("| file | " + " | ".join(ol_readers) + " |")
    L.append("|---|" + "---|" * len(ol_readers))
    for fid in files:
        cells = []
        for r in ol_readers:
            x = by[fid].get(r, {})
            cells.append(f"{x.get('outline_mapped', 0)}/{x.get('outline_items', 0)}" + (" (error)" if x.get("outline_error") else ""))
        if any(not c.startswith("0/0") for c in cells):
            L.append(f"| {fid} | " + " | ".join(cells) + " |")
    L.append("\n## Seconds per page per file\n")
    L.append("| file | " + " | ".join(readers) + " |")
    L.append("|---|" + "---|" * len(readers))
    for fid in files:
        cells = []
        for r in readers:
            x = by[fid].get(r)
            cells.append("—" if not x or x["seconds"] is None or not x["pages"] else f"{1000*x['seconds']/x['pages']:.1f} ms")
        L.append(f"| {fid} | " + " | ".join(cells) + " |")
    return "\n".join(L) + "\n"


def find_pdfs(args):
    out = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            out += sorted(q for q in p.rglob("*") if q.suffix.lower() == ".pdf" and q.is_file())
        elif p.is_file():
            out.append(p)
    # identical files are read once
    seen, uniq = set(), []
    for p in out:
        h = hashlib.sha256(p.read_bytes()).hexdigest()
        if h not in seen:
            seen.add(h)
            uniq.append(p.resolve())
    return uniq


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--out", default=str(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                                          / "rungs" / "pdf-readers"), help="where the extracted pages are kept")
    ap.add_argument("--results", default=str(Path(__file__).resolve().parent / "results"),
                    help="where pdf_readers.json and .md are written")
    ap.add_argument("--table", action="store_true", help="print the README's table from the results and stop")
    ap.add_argument("--readers", default=",".join(READERS))
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--metrics-only", action="store_true")
    ap.add_argument("--outlines-only", action="store_true", help="re-read only the outlines into saved results")
    ap.add_argument("--worker", nargs=3, metavar=("READER", "PDF", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(*a.worker)
        return
    if a.table:
        stored = json.loads((Path(a.results) / "pdf_readers.json").read_text(encoding="utf-8"))
        lines = []
        _table(stored["summary"]["common"], lines)
        print("\n".join(lines))
        return
    out = Path(a.out)
    readers = [r for r in a.readers.split(",") if r]
    index_file = out / "files.json"
    if a.outlines_only:
        listing = json.loads(index_file.read_text())
        for fid, path in listing["files"].items():
            for r in readers:
                if r in OUTLINE:
                    dest = out / "texts" / r / (safe(fid) + ".json")
                    d = json.loads(dest.read_text(encoding="utf-8"))
                    try:
                        d["outline"] = OUTLINE[r](path)
                    except Exception as e:
                        d["outline"] = {"error": repr(e)[:200], "items": []}
                    dest.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
        a.metrics_only = True
    if a.metrics_only:
        listing = json.loads(index_file.read_text())
    else:
        pdfs = find_pdfs(a.paths)
        root = Path(os.path.commonpath([str(p.parent) for p in pdfs]))
        listing = {"root": str(root), "files": {str(p.relative_to(root)): str(p) for p in pdfs}}
        out.mkdir(parents=True, exist_ok=True)
        index_file.write_text(json.dumps(listing, indent=1, ensure_ascii=False))
        n = len(listing["files"]) * len(readers)
        k = 0
        t_start = time.time()
        for fid, path in listing["files"].items():
            for r in readers:
                k += 1
                dest = out / "texts" / r / (safe(fid) + ".json")
                dest.parent.mkdir(parents=True, exist_ok=True)
                t0 = time.time()
                try:
                    subprocess.run([sys.executable, __file__, "--worker", r, path, str(dest)], timeout=a.timeout,
                                   check=False, env=dict(os.environ, OMP_NUM_THREADS="1"))
                except subprocess.TimeoutExpired:
                    dest.write_text(json.dumps({"reader": r, "path": path, "pages": [], "seconds": None,
                                                "error": f"timeout after {a.timeout:.0f} s"}))
                if not dest.exists():
                    dest.write_text(json.dumps({"reader": r, "path": path, "pages": [], "seconds": None,
                                                "error": "worker died"}))
                print(f"[{k}/{n}] {r:13s} {fid}  {time.time()-t0:.1f} s  (elapsed {time.time()-t_start:.0f} s)", flush=True)
    files = list(listing["files"])
    rows, summary = compute(out, files, readers)
    import importlib.metadata as md
    versions = {}
    for pkg in ("pypdf", "pdfminer.six", "pdfplumber", "pypdfium2"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    try:
        versions["pdftotext (poppler)"] = subprocess.run(["pdftotext", "-v"], capture_output=True, text=True).stderr.split()[2]
    except Exception:
        pass
    producers = {}
    for fid, path in listing["files"].items():
        info = subprocess.run(["pdfinfo", path], capture_output=True, text=True).stdout
        d = dict(l.split(":", 1) for l in info.splitlines() if ":" in l)
        producers[fid] = (d.get("Producer", "").strip() or d.get("Creator", "").strip())[:40]
    meta = dict(date=time.strftime("%Y-%m-%d"), machine=f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
                versions=versions, producers=producers,
                pages=sum(max((x["pages"] for x in rows if x["file"] == f), default=0) for f in files))
    results = Path(a.results)
    (results / "pdf_readers.json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows},
                                                         indent=1, ensure_ascii=False))
    (results / "pdf_readers.md").write_text(markdown(rows, summary, files, meta), encoding="utf-8")
    print((results / "pdf_readers.md").read_text())


if __name__ == "__main__":
    main()
