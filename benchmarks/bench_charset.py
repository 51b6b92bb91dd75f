"""Which detector reads a learner's non-UTF-8 text files right?  charset-normalizer vs chardet.

Each file's true encoding was decided by reading it (bytes 0x80–0x9F used as
Windows-1252 punctuation or €/œ → cp1252; « eurosym %for the ¤ » → ISO-8859-15;
otherwise ISO-8859-1; valid UTF-8 → utf-8).  A guess is right when the text it
decodes is *identical* to the text the true encoding gives (so « cp1252 » for a
Latin-1 file with no byte in 0x80–0x9F is right: same characters).

Strategies compared, on the whole file:
  charset-normalizer   charset_normalizer.from_bytes(data).best().encoding
  chardet              chardet.detect(data)["encoding"]
  cn-isolated          charset-normalizer limited to cp_isolation=["utf_8", "cp1252", "iso8859_15"]
  utf8-then-cp1252     strict UTF-8, else cp1252 (no library)
  utf8-then-cn         strict UTF-8, else charset-normalizer
  utf8-then-chardet    strict UTF-8, else chardet
  utf8-then-cn-isolated  strict UTF-8, else cn-isolated

Usage: python benchmarks/bench_charset.py      (needs chardet for its column: pip install chardet)

The 30 legacy files are in benchmarks/charset-samples/ (copied from Debian 12's texlive-lang-french
2022.20230122-1 and docbook-xsl-doc-html 1.79.1-1; MANIFEST.json names each one's path in its package;
the packages' licences are in benchmarks/folder/licences/); the UTF-8 and ASCII ones are the benchmark
folder's .txt and .md files. Results: benchmarks/results/charset.json and .md.
"""
import argparse
import codecs
import gzip
import json
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The unpacked packages, when they are at hand (dpkg -x PACKAGE.deb DIR); else the committed samples.
PACKAGES = HERE / "dl" / "x"
TL = PACKAGES / "texlive-lang-french/usr/share"
DOC = TL / "doc/texlive-doc"
TEX = TL / "texlive/texmf-dist/tex"
DB = PACKAGES / "docbook-xsl-doc-html/usr/share/doc/docbook-xsl-doc-html/doc/html"

CASES = [  # (path, truth)
    (DOC / "latex/booktabs-fr/README", "iso8859-1"),
    (DOC / "latex/aeguill/guil-test1.tex", "iso8859-1"),
    (DOC / "latex/epslatex-fr/Franc-chap.sty", "iso8859-1"),
    (DOC / "latex/epslatex-fr/overlay.sty", "iso8859-1"),
    (DOC / "latex/epslatex-fr/auteurs.sty", "iso8859-1"),
    (DOC / "latex/matapli/examples/couverture/couvertureModele.tex", "iso8859-1"),
    (DOC / "generic/e-french/test/texxetlb.tex", "iso8859-1"),
    (DOC / "plain/impatient-fr/fexamples.tex", "iso8859-1"),
    (DOC / "plain/impatient-fr/fbook.tex", "iso8859-1"),
    (DOC / "plain/impatient-fr/fread1st.tex", "iso8859-1"),
    (DOC / "plain/impatient-fr/ffrontm.tex", "iso8859-1"),
    (DOC / "plain/impatient-fr/fcopyrgh.tex", "iso8859-1"),
    (TEX / "latex/mafr/fiche.cls", "iso8859-1"),
    (TEX / "latex/tdsfrmath/tdsfrmath.sty", "iso8859-1"),
    (TEX / "generic/e-french/frabbrev.tex", "iso8859-1"),
    (TEX / "generic/e-french/frenchle.sty", "iso8859-1"),
    (TEX / "generic/e-french/frenchle.cfg", "iso8859-1"),
    (TEX / "generic/e-french/epreuve.sty", "iso8859-1"),
    (TEX / "generic/e-french/french.cfg", "iso8859-1"),
    (TEX / "generic/e-french/german_french-msg.tex", "iso8859-1"),
    (DOC / "generic/e-french/changements.html", "iso8859-1"),
    (DOC / "generic/e-french/histoire.html", "iso8859-1"),
    (DB / "toc.section.depth.html", "iso8859-1"),
    (DB / "generate.toc.html", "iso8859-1"),
    (DOC / "latex/mafr/docmafr.tex.gz", "cp1252"),
    (TEX / "latex/mafr/mafr.sty", "cp1252"),
    (DOC / "generic/e-french/test/tests-formats/TSIv5n48.tex.gz", "cp1252"),
    (DOC / "generic/e-french/test/frenchab.tex", "iso8859-15"),
    (DOC / "generic/e-french/test/frenchla.tex", "iso8859-15"),
    (DOC / "generic/e-french/test/frenchlb.tex", "iso8859-15"),
]


SAMPLES = HERE / "charset-samples"


def sample_cases():
    """The same cases from charset-samples/ (a copy made by --make-samples), when dl/ is not there."""
    m = json.loads((SAMPLES / "MANIFEST.json").read_text(encoding="utf-8"))
    return [(SAMPLES / r["path"], r["truth"]) for r in m["files"]]


def make_samples():
    import hashlib
    SAMPLES.mkdir(exist_ok=True)
    rows = []
    for path, truth in CASES:
        data = path.read_bytes()
        name = path.name[:-3] if path.suffix == ".gz" else path.name
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        dest = SAMPLES / name
        n = 2
        while dest.exists():
            dest = SAMPLES / f"{n}-{name}"
            n += 1
        dest.write_bytes(data)
        inner = str(path).split("/dl/x/", 1)[1].split("/", 1)
        rows.append({"path": dest.name, "truth": truth, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                     "package": inner[0], "path_in_package": inner[1], "decompressed": path.suffix == ".gz"})
    (SAMPLES / "MANIFEST.json").write_text(json.dumps({"files": rows}, indent=1, ensure_ascii=False), encoding="utf-8")
    print(len(rows), "samples written to", SAMPLES)


def folder_cases():
    """Every .txt and .md file of the benchmark folder: their truth is what they are (checked below)."""
    out = []
    for p in sorted((HERE / "folder" / "documents").rglob("*")):
        if p.suffix in (".txt", ".md") and p.name != "README.md":  # the folder's README is ours, not a package's
            b = p.read_bytes()
            try:
                b.decode("utf-8")
                out.append((p, "utf-8" if any(c > 127 for c in b) else "ascii"))
            except UnicodeDecodeError:
                pass  # the two non-UTF-8 ones are in CASES from their package path
    return out


def shipped(data):
    """The encoding rungs.yours.readers reads ``data`` in (None if it refuses the file)."""
    import sys
    sys.path.insert(0, str(HERE.parent))
    from rungs.yours.readers.common import Unreadable, decode as rungs_decode
    try:
        return rungs_decode(data)[1].replace("_", "-")
    except Unreadable:
        return None


def decode(data, enc):
    try:
        return data.decode(enc) if enc else None
    except (LookupError, UnicodeDecodeError):
        return None


def name(enc):
    try:
        return codecs.lookup(enc).name if enc else None
    except LookupError:
        return enc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--make-samples", action="store_true", help="copy the cases from dl/ into charset-samples/")
    a = ap.parse_args()
    if a.make_samples:
        make_samples()
        return
    import charset_normalizer
    import chardet
    cases = (CASES if all(p.exists() for p, _ in CASES) else sample_cases()) + folder_cases()
    rows = []
    times = {"charset-normalizer": 0.0, "chardet": 0.0}
    for path, truth in cases:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        want = data.decode("utf-8" if truth == "ascii" else truth)
        t0 = time.perf_counter()
        best = charset_normalizer.from_bytes(data).best()
        times["charset-normalizer"] += time.perf_counter() - t0
        cn = best.encoding if best else None
        iso = charset_normalizer.from_bytes(data, cp_isolation=["utf_8", "cp1252", "iso8859_15"]).best()
        cn_iso = iso.encoding if iso else None
        t0 = time.perf_counter()
        cd = chardet.detect(data)["encoding"]
        times["chardet"] += time.perf_counter() - t0
        try:
            data.decode("utf-8")
            utf8 = True
        except UnicodeDecodeError:
            utf8 = False
        guesses = {"charset-normalizer": cn, "chardet": cd,
                   "cn-isolated": cn_iso,
                   "utf8-then-cp1252": "utf-8" if utf8 else "cp1252",
                   "utf8-then-cn-isolated": "utf-8" if utf8 else cn_iso,
                   "utf8-then-cn": "utf-8" if utf8 else cn,
                   "utf8-then-chardet": "utf-8" if utf8 else cd,
                   "rungs (as shipped)": shipped(data)}
        row = {"file": str(path.relative_to(HERE)), "bytes": len(data), "truth": truth,
               "non_ascii_bytes": sum(1 for c in data if c > 127)}
        for k, g in guesses.items():
            text = decode(data, g)
            row[k] = {"guess": name(g), "right": text == want,
                      "wrong_chars": None if text is None else sum(1 for x, y in zip(text, want) if x != y) + abs(len(text) - len(want))}
        rows.append(row)
    strategies = list(rows[0])[4:]
    summary = {}
    for k in strategies:
        by = {}
        for r in rows:
            g = "non-UTF-8" if r["truth"] not in ("utf-8", "ascii") else r["truth"]
            by.setdefault(g, [0, 0])
            by[g][0] += r[k]["right"]
            by[g][1] += 1
        summary[k] = {g: f"{a}/{n}" for g, (a, n) in by.items()}
        summary[k]["all"] = f"{sum(r[k]['right'] for r in rows)}/{len(rows)}"
    out = Path(a.out)
    out.mkdir(exist_ok=True)
    import importlib.metadata as md
    meta = {"charset-normalizer": md.version("charset-normalizer"), "chardet": md.version("chardet"),
            "seconds": {k: round(v, 3) for k, v in times.items()}}
    (out / "charset.json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=1, ensure_ascii=False))
    L = [f"# Charset detection on {len(rows)} real text files\n",
         f"charset-normalizer {meta['charset-normalizer']}, chardet {meta['chardet']}; total detection time "
         f"{meta['seconds']['charset-normalizer']:.2f} s and {meta['seconds']['chardet']:.2f} s.\n",
         "| strategy | UTF-8 files | ASCII files | non-UTF-8 files | all |", "|---|---|---|---|---|"]
    for k, s in summary.items():
        L.append(f"| {k} | {s.get('utf-8','')} | {s.get('ascii','')} | {s.get('non-UTF-8','')} | {s['all']} |")
    L += ["\n## Non-UTF-8 files, one by one (guess; ✗ = decoded text differs from the truth)\n",
          "| file | bytes | non-ASCII bytes | truth | charset-normalizer | chardet | cn-isolated | utf8-then-cp1252 |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["truth"] in ("utf-8", "ascii") and all(r[k]["right"] for k in strategies):
            continue
        cell = lambda k: f"{r[k]['guess']}{'' if r[k]['right'] else ' ✗ (' + str(r[k]['wrong_chars']) + ' chars)'}"
        L.append(f"| {r['file'].replace('dl/x/texlive-lang-french/usr/share/', '')} | {r['bytes']} | {r['non_ascii_bytes']} | {r['truth']} | "
                 f"{cell('charset-normalizer')} | {cell('chardet')} | {cell('cn-isolated')} | {cell('utf8-then-cp1252')} |")
    (out / "charset.md").write_text("\n".join(L) + "\n", encoding="utf-8")
    print("\n".join(L))


if __name__ == "__main__":
    main()
