"""``python -m rungs index | search | ask``: the ladder as three commands over a folder of your own.

What it is for: what notebook 07 does cell by cell, from a terminal — index a
folder once (then again, incrementally, after you edit it), search it with any
rung and its knobs, ask a question and get an answer with its sources as file
paths and page numbers, or « je ne sais pas ».

Errors: a learner reads one line that says what to do (the ``RungsError``
message), never a traceback. Exit status: 0 done, 1 refused or failed,
2 a command line that does not parse.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ..core import paths
from ..core.errors import RungsError
from ..core.secrets import redact
from .cli_help import ASK_TIME, EXAMPLES_ASK, EXAMPLES_INDEX, EXAMPLES_SEARCH, INDEX_TIME, POOL_TIME, SEARCH_TIME

#: The largest --max-mb: past 100 GB, a « file » is a disk image, and the number no longer converts.
MAX_MB = 100_000


def _parser(command: str) -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    if command == "index":
        p = argparse.ArgumentParser(
            prog="python -m rungs index", formatter_class=formatter,
            epilog=EXAMPLES_INDEX.format(**INDEX_TIME, **POOL_TIME),
            description="Index a folder of your own documents (Markdown, text, HTML, PDF, Word .docx) so that "
                        "`python -m rungs search` and `ask` can use it. Files it cannot read are listed with "
                        "the reason; the others are indexed.")
        p.add_argument("folder", help="the folder to index (its sub-folders too; hidden ones are skipped)")
        p.add_argument("--index", metavar="PATH", help="the index's database file "
                       "(default: FOLDER/.rungs/index.sqlite; give one when FOLDER is read-only)")
        p.add_argument("--size", type=int, default=None, help="passage size in characters "
                       "(default 1500, or what the index already has; a change re-reads every file)")
        p.add_argument("--overlap", type=int, default=None, help="characters repeated between passages (default 200)")
        p.add_argument("--no-vectors", action="store_true",
                       help="do not encode now (fast; the vector rungs encode on their first search)")
        p.add_argument("--max-mb", type=float, default=20.0, help="skip files larger than this (default 20 MB)")
        return p
    p = argparse.ArgumentParser(
        prog=f"python -m rungs {command}", formatter_class=formatter,
        epilog=EXAMPLES_SEARCH.format(**SEARCH_TIME) if command == "search" else EXAMPLES_ASK.format(**ASK_TIME),
        description=("Search the indexed folder with any rung of the ladder, its knobs as options."
                     if command == "search" else
                     "Answer a question from the indexed folder, citing the files (and pages) it comes from, "
                     "or say « je ne sais pas »."))
    p.add_argument("query" if command == "search" else "question", help="what you are looking for, as you would "
                   "say it (it is never read as query syntax)")
    p.add_argument("--index", metavar="PATH", help="the index (a database file or an indexed folder); default: "
                   "the one in the current folder, else the last one indexed")
    p.add_argument("--rung", choices=("fts", "bm25", "vectors", "hybrid"), default="hybrid",
                   help="which ranking (default hybrid)")
    if command == "search":
        p.add_argument("--limit", type=int, default=5, help="how many results (default 5)")
        p.add_argument("--passages", action="store_true", help="show passages, not documents")
        p.add_argument("--explain", action="store_true",
                       help="show the parts of each score: words (bm25), legs and ranks (hybrid), passages")
        rank = p.add_argument_group("documents from passages")
        rank.add_argument("--rollup", choices=("max", "sum"), default="max",
                          help="a document scores its best passage (max) or its --top best summed (sum)")
        rank.add_argument("--top", type=int, default=2, help="passages summed by --rollup sum (default 2)")
    else:
        _ask_options(p)
    keyword = p.add_argument_group("keyword knobs (fts, bm25, and the hybrid's keyword leg)")
    keyword.add_argument("--match", choices=("any", "all"), default=None,
                         help="a result holds any word (default) or all of them")
    keyword.add_argument("--k1", type=float, default=None, help="BM25: how fast repeats stop counting (1.2)")
    keyword.add_argument("--b", type=float, default=None, help="BM25: how much long passages are penalised (0.75)")
    keyword.add_argument("--title-weight", type=float, default=None, help="a title word counts this many times (1)")
    keyword.add_argument("--keep-stopwords", action="store_true", help="bm25: keep « le », « de »… (dropped by default)")
    _fusion_options(p)
    # A test double for `ask`, never the default: replies written by hand instead of a model (rungs.model.ScriptedClient).
    p.add_argument("--scripted-replies", help=argparse.SUPPRESS)
    return p


def _fusion_options(p: argparse.ArgumentParser) -> None:
    """The hybrid's knobs, their defaults said as ``hybrid.YOUR_DOCUMENTS`` holds them (never copied here)."""
    from ..hybrid import YOUR_DOCUMENTS

    fusion = p.add_argument_group("fusion knobs (hybrid)")
    fusion.add_argument("--k", type=float, default=None, help="RRF's constant: small, each leg's favourite wins; "
                        f"large, what both legs find wins ({YOUR_DOCUMENTS['k']})")
    fusion.add_argument("--keyword-weight", type=float, default=None,
                        help=f"the keyword leg's weight ({YOUR_DOCUMENTS['leg_weights']['keyword']:g})")
    fusion.add_argument("--vector-weight", type=float, default=None,
                        help=f"the vector leg's weight ({YOUR_DOCUMENTS['leg_weights']['vector']:g}: BM25 leads until "
                        "your own questions say otherwise)")
    fusion.add_argument("--window", type=int, default=None, help="how many results each leg brings (100)")


def _ask_options(p: argparse.ArgumentParser) -> None:
    from ..rag import COPIED, DEFAULT_MODE, READERS

    p.add_argument("--passages", type=int, default=4, help="how many passages to read (1–4, default 4)")
    p.add_argument("--mode", choices=READERS, default=DEFAULT_MODE, help=f"default {DEFAULT_MODE}: no model writes, "
                   f"the {COPIED} sentences that match best are copied (if the decision says so); pointing-lead: a "
                   "few words, then the sentences that say them; pointing: only sentences; quoted: the model writes "
                   "and quotes; free: it writes and cites ids")
    p.add_argument("--decision", choices=("handbook", "off"), default=None,
                   help="whether to show the copy: handbook (the default with --mode copy), the decision that ships "
                   "with rungs, fitted on the handbook; off: always show it, no model asked")
    p.add_argument("--coverage", type=float, default=None, metavar="C",
                   help="the share of questions the decision answers, 0–1 (default: the one it was chosen at)")
    p.add_argument("--gate", default=None, metavar="P",
                   help="the sufficient-context gate: first ask whether the passages answer at all, and below this "
                   f"P(yes) say « je ne sais pas » without asking for the answer; 0–1, or off (default {_gate_said()})")


def _gate_said() -> str:
    from ..rag import DEFAULT_GATE

    return "off" if DEFAULT_GATE is None else f"{DEFAULT_GATE:g}, chosen by the protocol: benchmarks/README.md"


def _gate(value: str | None) -> float | None:
    """--gate as rag.answer takes it: a threshold in [0, 1], None when off; rag's default when not given."""
    from ..rag import DEFAULT_GATE

    if value is None:
        return DEFAULT_GATE
    if value.strip().lower() == "off":
        return None
    try:
        threshold = float(value)
    except ValueError:
        threshold = -1.0
    if not 0.0 <= threshold <= 1.0:
        raise RungsError(f"--gate is a probability between 0 and 1, or off, not {value!r}")
    return threshold


def _knobs(args) -> tuple[dict, dict]:
    """(search-time knobs of the rung, knobs of the hybrid's keyword leg), from the options given."""
    knobs, keyword = {}, {}
    if args.rung in ("fts", "bm25"):
        target = knobs
    elif args.rung == "hybrid":
        target = keyword
    else:
        target = {}
        given = [o for o in ("match", "k1", "b", "title_weight") if getattr(args, o) is not None]
        if given:
            raise RungsError(f"--{given[0].replace('_', '-')} is a keyword knob; the vectors rung has none")
    if args.match is not None:
        target["match"] = args.match
    if args.title_weight is not None:
        target["weights"] = {"title": args.title_weight}
    for name in ("k1", "b"):
        if getattr(args, name) is not None:
            if args.rung == "fts":
                raise RungsError(f"--{name}: FTS5's bm25() has k1 = 1.2 and b = 0.75 compiled in; "
                                 "use --rung bm25 to turn them")
            target[name] = getattr(args, name)
    fusion = {"k": args.k, "window": args.window}
    weights = {"keyword": args.keyword_weight, "vector": args.vector_weight}
    if args.rung != "hybrid" and any(v is not None for v in [*fusion.values(), *weights.values()]):
        raise RungsError("--k, --window and the leg weights are fusion knobs: add --rung hybrid")
    knobs.update({k: v for k, v in fusion.items() if v is not None})
    if any(v is not None for v in weights.values()):
        knobs["leg_weights"] = {k: 1.0 if v is None else v for k, v in weights.items()}
    return knobs, keyword


def _shown(path: Path) -> str:
    """A path as short as it can be said: relative to the current folder when it is inside it; a name that is
    not UTF-8 shown with « \ufffd », so that a strict terminal can print it."""
    try:
        said = str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        said = str(path)
    return paths.printable(said)


def _client(args):
    """The test double ``--scripted-replies`` (or ``RUNGS_SCRIPTED_REPLIES``) names, or None for the model."""
    replies = args.scripted_replies or paths.setting_text("RUNGS_SCRIPTED_REPLIES")
    if not replies:
        return None
    from ..model import ScriptedClient

    source = Path(replies)
    try:
        text = source.read_text(encoding="utf-8") if len(replies) < 4096 and source.is_file() else replies
        script = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise RungsError(f"--scripted-replies (or RUNGS_SCRIPTED_REPLIES) must be a JSON list of replies, or a file "
                         f"holding one ({type(err).__name__}: {str(err)[:80]})") from None
    if not isinstance(script, list):
        raise RungsError(f"--scripted-replies (or RUNGS_SCRIPTED_REPLIES) must be a JSON list of replies, "
                         f"not a {type(script).__name__}")
    return ScriptedClient(script)


def index(args) -> int:
    from ..core.display import safe_text
    from ..yours.index import index_folder

    started = time.perf_counter()
    if not 0 < args.max_mb <= MAX_MB:  # nan fails both comparisons: refused too
        raise RungsError(f"--max-mb must be a number of megabytes above 0 and at most {MAX_MB:,}, "
                         f"not {args.max_mb:g}")
    store = index_folder(args.folder, index=args.index, size=args.size, overlap=args.overlap,
                         vectors=not args.no_vectors, max_bytes=int(args.max_mb * 1e6), progress=True,
                         remember=True)
    print(safe_text(str(store.report)))  # file names and reasons come from the folder
    print(f"index: {_shown(store.path)}  ({time.perf_counter() - started:.1f} s; passages of {store.size} "
          f"characters, {store.overlap} of overlap)")
    print('next:  python -m rungs search "your question"' + ("" if Path(args.folder).resolve() == Path.cwd().resolve()
                                                            else f" --index {_shown(store.path)}"))
    return 0


def search(args) -> int:
    from ..core.display import hits_table, safe_text
    from ..yours.index import open_index

    store = open_index(args.index)
    knobs, keyword = _knobs(args)
    retriever = store.retriever(args.rung, stopwords=not args.keep_stopwords, keyword_knobs=keyword or None,
                                progress=True)
    own = {"level": "passage" if args.passages else "document"}
    if not args.passages:
        own.update(rollup=args.rollup, top=args.top)
    hits = retriever.search(args.query, limit=args.limit, **knobs, **own)
    what = "passages" if args.passages else f"documents (passages rolled up by {args.rollup})"
    print(f"{args.rung} · {what} · {store.count()} documents of {_shown(Path(store.folder.name))}/")
    print(safe_text(hits_table(hits, explain=args.explain)))  # titles and snippets are the documents' words
    return 0


def _link(store, hit) -> str:
    """A link that opens the file at the page: ``file:///…/x.pdf#page=12`` (every common PDF viewer reads it)."""
    path = (store.folder / (hit.get("path") or hit.id.split("#")[0])).resolve()
    return path.as_uri() + (f"#page={hit['page']}" if hit.get("page") is not None else "")


def _reader(args, store, sink):
    """N3 over the folder: the rung and its knobs from the options, the prompt naming the folder (not a handbook)."""
    from .. import rag

    knobs, keyword = _knobs(args)
    if not 1 <= args.passages <= rag.MAX_PASSAGES:
        raise RungsError(f"--passages must be between 1 and {rag.MAX_PASSAGES}, not {args.passages}")
    retriever = store.retriever(args.rung, stopwords=not args.keep_stopwords, keyword_knobs=keyword or None)
    meta = retriever.meta
    document = lambda i: {"id": i, "title": meta[i].get("title") or "", "body": meta[i]["body"]} if i in meta else None
    return rag.Rag(retriever, document, _client(args), passages=args.passages, search={"level": "passage", **knobs},
                   mode=args.mode, gate=_gate(args.gate), **_decision(args),
                   collection=f"des documents du dossier « {_shown(Path(store.folder.name))} »", sink=sink)


def _decision(args) -> dict:
    """--decision and --coverage as rag.answer takes them (it checks the coverage; only copy has a decision)."""
    from .. import rag

    if rag.reader(args.mode).model and (args.decision is not None or args.coverage is not None):
        raise RungsError("--decision and --coverage say when to show the copy: they go with --mode copy; "
                         "the model's modes decide by their own « aucune », or behind --gate")
    out = {"decision": None if args.decision == "off" else "auto"}
    if args.coverage is not None:
        if args.decision == "off":
            raise RungsError("--coverage is the decision's: it has none with --decision off")
        out["coverage"] = args.coverage
    return out


def ask(args) -> int:
    from .. import rag  # the answer half loads only when a question is asked
    from ..core.display import safe_text
    from ..grounding import Status
    from ..yours.index import open_index

    store = open_index(args.index)
    clock = {"start": time.perf_counter()}

    def sink(event):  # the answer as it comes (one event, rungs.grounding.events): a line, then each sentence
        if event["type"] == "reading":
            print(f"… the model reads {event['sentences']} sentences (~{event['tokens']} tokens)", flush=True)
        elif event["type"] == "writing" and not rag.reader(args.mode).streams:
            print("… the model answers; the answer is shown once it is checked", flush=True)
        elif event["type"] == "sentence":
            clock.setdefault("first", time.perf_counter())
            print("… " + safe_text(event["text"]), flush=True)

    reader = _reader(args, store, sink)  # every option checked before a line is printed
    print(f"question: {safe_text(args.question)}", flush=True)  # a question pasted from a file may hold escapes
    if not rag.reader(args.mode).model:
        print("… the sentences that match the question best are copied" + (
            "; the model is asked one question: do they answer?" if args.decision != "off" else ", no model asked"),
            flush=True)
    elif not rag.reader(args.mode).numbered:
        print(f"… the model reads {args.passages} passage(s) and writes; the answer is shown once it is checked",
              flush=True)
    answer = reader.ask(args.question)
    if answer.status in (Status.UNAVAILABLE, Status.REFUSED):  # nothing is shown: one line says why
        raise RungsError(f"no answer shown ({answer.status}): " + str(answer.error or answer.reason))
    print(str(answer))  # the one printer's lines (rungs.grounding.showing), as a notebook shows them
    _print_beside(answer, store, args)
    reading = f", {clock['first'] - clock['start']:.1f} s before the first sentence" if "first" in clock else ""
    hits = {h.id: h for h in answer.hits}
    read = " · ".join(_where(hits[i]) for i in answer.sent) or "none"
    print(safe_text(f"({len(answer.sent)} passage(s) read: {read}; {answer.cost}{reading})"))
    return 0


def _where(hit) -> str:
    from ..core.display import where

    return where(hit)


def _print_beside(answer, store, args) -> None:
    """What a terminal adds to the one printer's lines: each cited file with its title and a link that opens
    it at the page, and what was checked — provenance, not a verdict."""
    from .. import rag  # loaded by ask already: a lookup
    from ..core.display import safe_text

    hits = {h.id: h for h in answer.hits}
    if answer.cited:
        print(safe_text("sources:\n" + "\n".join(f"  - {_where(hits[s])}  ({hits[s].title})  {_link(store, hits[s])}"
                                                  for s in answer.cited)))
    if answer.decision:
        print("decision: on your own folder the handbook's decision is applied as is")
    if answer.answered:
        how = "copied from them by code" if rag.reader(args.mode).numbered else "found in them word for word"
        said = [f.figure for f in answer.figures]
        read = "one the search found" if not rag.reader(args.mode).model else "one the model read"
        print(f"checked:  where the words come from — every cited passage was {read}"
              + (f"; the quotes are {how}" if answer.quotes else "")
              + (f"; every figure ({', '.join(said)}) is in a cited passage or the question" if said else "")
              + ".\n          Not checked: whether this answers your question — read the quotes.")


COMMANDS = {"index": index, "search": search, "ask": ask}


#: One query is one matrix-vector product: a second BLAS thread only waits for the first (on a busy
#: two-core machine, 0.5 ms became 2.5–24 ms). Set before numpy is imported; a setting of yours wins.
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def main(argv: list[str] | None = None) -> int:
    """``argv[0]`` is the command (``index``, ``search``, ``ask``), the rest its options."""
    import os

    for name in ONE_THREAD:
        os.environ.setdefault(name, "1")
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m rungs {{{','.join(COMMANDS)}}} ... (one of them with --help)", file=sys.stderr)
        return 2
    command = argv[0]
    try:
        args = _parser(command).parse_args(argv[1:])
    except SystemExit as exit_:  # --help (0) or a command line that does not parse (2): argparse has spoken
        return int(exit_.code or 0)
    try:
        return COMMANDS[command](args)
    except RungsError as err:  # a refusal may quote a document or the model: shown without its controls
        from ..core.display import safe_text

        print(f"error: {safe_text(redact(' '.join(str(err).split()) if command == 'index' else err))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: nothing half-done was kept (an index stays as it was before this run)", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"error: {err.strerror or err}: {err.filename or ''}".rstrip(": "), file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - index promises one line, never a traceback, even for our own bug
        if command != "index":
            raise
        said = redact(" ".join(str(err).split()))[:300]
        print(f"error: indexing stopped on an unexpected error ({type(err).__name__}: {said}); the previous index "
              "is as it was. Please report this line", file=sys.stderr)
        return 1
