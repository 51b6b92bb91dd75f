"""``python -m rungs index | search | ask``: what a learner types, what they read back.

In-process through ``rungs.cli.main([...])`` (argv[0] is the command), and once
as a real subprocess. Errors are one line on stderr with the fix, never a
traceback; exit 1 when refused, 2 when the command line does not parse.
``ask`` runs against ``ScriptedClient`` (a test double, selected by a hidden
option or ``RUNGS_SCRIPTED_REPLIES``; never the default).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rungs.tools import cli

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "notebooks" / "data" / "my-documents"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("RUNGS_SCRIPTED_REPLIES", raising=False)
    root = tmp_path / "docs"
    shutil.copytree(BUNDLED, root)
    monkeypatch.chdir(tmp_path)
    return root


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.fixture
def indexed(folder, capsys):
    code, out, err = run(capsys, "index", str(folder), "--no-vectors")
    assert code == 0, err
    return folder


def test_index_reports_what_was_read_and_what_was_not(folder, capsys):
    code, out, err = run(capsys, "index", str(folder), "--no-vectors")
    assert code == 0 and err == ""
    assert "15 documents" in out and "15 added" in out
    assert "avantages/accord-interessement.pdf: not a readable PDF" in out
    assert "archives/note-1998.txt: read as Windows-1252 (not UTF-8)" in out  # detected, read, and said
    assert "index: docs/.rungs/index.sqlite" in out and ".~lock" not in out
    code, out, _ = run(capsys, "index", str(folder), "--no-vectors")
    assert code == 0 and "0 added, 0 changed, 0 removed, 15 unchanged; 0 read" in out


def test_search_any_keyword_rung_with_its_knobs_and_explanations(indexed, capsys):
    code, out, _ = run(capsys, "search", "harcèlement sexiste", "--index", str(indexed), "--rung", "bm25", "--explain")
    assert code == 0
    first = out.splitlines()[1]
    assert "reglement-interieur.pdf, p. 2" in first or "reglement-interieur.pdf, p. 3" in first
    assert "« harcelement »" in out and "best: passage" in out
    code, out, _ = run(capsys, "search", "congés payés", "--index", str(indexed), "--rung", "fts", "--passages",
                       "--match", "all", "--limit", "3")
    assert code == 0 and "conges/conges-payes.pdf#1" in out and "fts · passages · 15 documents of docs/" in out
    code, out, _ = run(capsys, "search", "badge", "--index", str(indexed), "--rung", "bm25", "--k1", "0",
                       "--b", "0", "--title-weight", "3", "--rollup", "sum", "--top", "3")
    assert code == 0 and "temps-de-travail/pointage.txt" in out


def test_search_finds_the_index_of_the_current_folder(indexed, capsys, monkeypatch):
    monkeypatch.chdir(indexed)
    code, out, _ = run(capsys, "search", "titres-restaurant", "--rung", "fts")
    assert code == 0 and "avantages/titres-restaurant.html" in out


@pytest.mark.parametrize("argv, message", [
    (["search", "x", "--index", "nowhere"], "error: no index at nowhere: run  python -m rungs index FOLDER  first"),
    (["search", "x", "--rung", "fts", "--k1", "2"], "error: --k1: FTS5's bm25() has k1 = 1.2 and b = 0.75 compiled in"),
    (["search", "x", "--rung", "bm25", "--k", "10"], "error: --k, --window and the leg weights are fusion knobs"),
    (["search", "x", "--rung", "bm25", "--limit", "-1"], "error: limit must be 0 or more, not -1"),
    (["search", "x", "--rung", "bm25", "--b", "2"], "error: b must be at most 1, not 2"),
    (["index", "no-such-folder"], "error: no-such-folder: no such folder"),
    (["ask", "x", "--rung", "bm25", "--passages", "9"], "error: --passages must be between 1 and 4, not 9"),
])
def test_a_refusal_is_one_line_with_the_fix_and_exit_1(indexed, capsys, argv, message):
    argv = [*argv, "--index", str(indexed)] if argv[0] != "index" and "--index" not in argv else argv
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert err.startswith(message) and err.count("\n") == 1


@pytest.mark.parametrize("argv", [["search"], ["search", "x", "--rung", "sql"], ["index"], ["ask", "x", "--k", "a"],
                                  ["nope"], []])
def test_a_command_line_that_does_not_parse_is_exit_2(capsys, argv):
    assert cli.main(argv) == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["index", "search", "ask"])
def test_help_says_what_it_is_for_what_it_costs_and_shows_an_example(capsys, command):
    assert cli.main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"python -m rungs {command}" in out and "what it costs" in out and "example" in out
    assert "scripted" not in out  # the test double is not advertised


def _sentences(indexed, question, passages=4):
    """The numbered sentences `ask` sends for ``question`` (rung bm25), as the pointing mode numbers them."""
    from rungs import rag
    from rungs.yours.index import open_index
    retriever = open_index(indexed).retriever("bm25")
    hits = retriever.search(question, limit=passages, level="passage")
    sent = rag.prepare_passages([{"id": h.id, "title": h.title, "body": retriever.meta[h.id]["body"]} for h in hits])
    return rag.sentences_for(question, sent)


@pytest.mark.encoder  # past 12 sentences, the ones sent are chosen with the vector leg too
def test_ask_streams_the_sentences_then_each_quote_with_its_file_page_link_and_checks(indexed, capsys):
    question = "Quelles sanctions disciplinaires le règlement prévoit-il ?"
    sentences = _sentences(indexed, question)
    chosen = next(s for s in sentences if "Discipline et sanctions" in s["text"])
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", "--mode", "pointing",
                         "--scripted-replies", json.dumps([json.dumps({"phrases": [chosen["n"]]})]))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].startswith("… the model reads 12 sentences (~")  # said before the answer comes
    assert lines[2] == "… " + chosen["text"]  # streamed as it comes; the checked answer is printed under it
    assert f"[1] « {chosen['text']} »" in out and "reglement-interieur.pdf, p. " in out
    link = next(line.split("  ")[-1] for line in lines if line.startswith("  - ") and "file://" in line)
    assert link.startswith((indexed / "reglement-interieur.pdf").resolve().as_uri() + "#page=")
    # What was checked is where the words come from, and it says what was not checked: no ✓ that reads as « right »
    # (a ✓ marks a figure held by a cited passage, on the one printer's figures line only).
    assert "checked:  where the words come from — every cited passage was one the model read" in out
    assert "the quotes are copied from them by code" in out and "Not checked: whether this answers" in out
    assert all(line.startswith("  figures: ") for line in lines if "✓" in line) and "1 call ·" in out



@pytest.mark.encoder
def test_ask_copy_asks_no_model_and_prints_the_sentences_that_match_best(indexed, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # a model asked here would be unreachable
    question = "Quelles sanctions disciplinaires le règlement prévoit-il ?"
    best = sorted(_sentences(indexed, question), key=lambda s: s["rank"])[:3]
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", "--mode", "copy",
                         "--decision", "off")
    assert code == 0, err
    assert out.splitlines()[1] == "… the sentences that match the question best are copied, no model asked"
    assert all(f"« {s['text']} »" in out for s in best) and out.count("\n  [") == 3
    assert "every cited passage was one the search found" in out and "no model call" in out


@pytest.mark.encoder
def test_ask_pointing_lead_shows_the_words_checked_then_the_sentences_that_hold_their_figures(indexed, capsys):
    question = "Quelles sanctions disciplinaires le règlement prévoit-il ?"
    sentences = _sentences(indexed, question)
    holder = next(s for s in sentences if "cinq jours" in s["text"])
    beside = next(s for s in sentences if s["n"] != holder["n"])
    reply = json.dumps({"reponse": "Une mise à pied de cinq jours au plus.", "phrases": [beside["n"]]})
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", "--mode", "pointing-lead",
                         "--scripted-replies", json.dumps([reply]))
    assert code == 0, err
    assert "… the model answers; the answer is shown once it is checked" in out
    # The words on the answer's line, the sentence that holds « 5 » under them.
    assert f"answer: Une mise à pied de cinq jours au plus.\n{holder['text']}" in out
    assert "every figure (5 jours" in out


@pytest.mark.encoder
def test_ask_by_default_copies_the_best_sentences_if_the_decision_says_and_prints_it(indexed, capsys, monkeypatch):
    question = "Quelles sanctions disciplinaires le règlement prévoit-il ?"
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps([_gate_reply(0.95)]))
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25")
    assert code == 0, err
    assert "the model is asked one question: do they answer?" in out and out.count("\n  [") == 3
    assert "  gate: P(the sentences answer the question) = 0.95, one of the decision's signals" in out
    line = next(x for x in out.splitlines() if x.startswith("  decision: "))
    assert "P(the copy is right) = " in line and "(set to answer 50% of the questions it was fitted on)" in line
    assert line.endswith("the sentences are shown") and "from the handbook's deciding half (126 questions)" in out
    assert "1 call ·" in out
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps([_gate_reply(0.05)]))
    code, out, err = run(capsys, "ask", "Quand a lieu le séminaire annuel des managers ?", "--index", str(indexed),
                         "--rung", "bm25", "--coverage", "0.3")
    assert code == 0 and "no answer: je ne sais pas" in out.lower() and "answer 30% of the questions" in out
    assert "below it: « je ne sais pas »" in out and "  why: the decision: P(the copy is right)" in out
    for argv, said in ((["--mode", "free", "--coverage", "0.8"], "go with --mode copy"),
                       (["--decision", "off", "--coverage", "0.8"], "it has none with --decision off"),
                       (["--coverage", "2"], "coverage")):
        code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", *argv)
        assert code == 1 and said in err, (argv, err)


def test_ask_quoted_mode_repairs_a_quote_once_then_shows_it_found(indexed, capsys, monkeypatch):
    question = "Que faire d'un badge perdu ?"
    from rungs.yours.index import open_index
    sent = [h.id for h in open_index(indexed).retriever("bm25").search(question, limit=1, level="passage")]
    bad = json.dumps({"answer": "Dans le coffre-fort.", "quotes": [{"source": sent[0], "text": "un coffre inventé"}]})
    body = open_index(indexed).retriever("bm25").meta[sent[0]]["body"]
    words = " ".join(body.split()[:6])
    good = json.dumps({"answer": "Voir le passage.", "quotes": [{"source": sent[0], "text": words.upper()}]})
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps([bad, good]))
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", "--passages", "1",
                         "--mode", "quoted")
    assert code == 0, err
    assert "answer: Voir le passage." in out and "the quotes are found in them word for word" in out
    assert "2 calls ·" in out  # the first reply's quote was not found: one repair round trip
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps([bad, bad]))
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", "--passages", "1",
                         "--mode", "quoted")
    assert code == 1 and "answer:" not in out
    assert err.startswith("error: no answer shown (refused): the quote « un coffre inventé » is not in passage")


def test_ask_says_je_ne_sais_pas_and_refuses_an_invented_source(indexed, capsys, monkeypatch):
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps(['{"reponse": "Je ne sais pas.", "phrases": []}']))
    code, out, _ = run(capsys, "ask", "Quel temps fera-t-il demain ?", "--index", str(indexed), "--rung", "bm25",
                       "--passages", "1")
    assert code == 0 and "no answer: je ne sais pas" in out and "[1]" not in out and "checked:" not in out
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps(['{"answer": "Oui.", "sources": ["secret.pdf#1"]}']))
    code, out, err = run(capsys, "ask", "Le badge est-il gratuit ?", "--index", str(indexed), "--rung", "bm25",
                         "--mode", "free")
    assert code == 1 and err.startswith("error: no answer shown (refused): the answer cites ['secret.pdf#1'], never sent")


def _gate_reply(yes: float) -> dict:
    """The gate's one-token reply, its log-probabilities as the server returns them."""
    import math
    top = {"Oui": math.log(yes), "Non": math.log(1 - yes)}
    return {"text": "Oui", "logprobs": [{"token": "Oui", "logprob": top["Oui"], "top": top}]}


def test_ask_gate_prints_its_probability_and_below_its_threshold_does_not_ask(indexed, capsys, monkeypatch):
    question = "Que faire d'un badge perdu ?"
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps([_gate_reply(0.2)]))
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", "--gate", "0.5",
                         "--mode", "pointing-lead")
    assert code == 0, err
    assert "no answer: je ne sais pas" in out.lower()
    assert ("  gate: P(the passages answer the question) = 0.20, threshold 0.50: below it: « je ne sais pas », nothing "
            "more was asked") in out
    assert "  why: the gate: P(the extracts answer the question) = 0.20" in out and "checked:" not in out
    assert "1 call ·" in out  # the gate's call only: the answer's was never made
    # Above the threshold the answer is asked for, over the same prompt start; « off » is no gate at all.
    from rungs.yours.index import open_index
    sent = open_index(indexed).retriever("bm25").search(question, limit=1, level="passage")[0].id
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps([_gate_reply(0.9), json.dumps({"answer": "Le signaler.",
                                                                                          "sources": [sent]})]))
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", "--mode", "free",
                         "--passages", "1", "--gate", "0.5")
    assert code == 0 and "= 0.90, threshold 0.50: the answer went on" in out and "2 calls ·" in out
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps([json.dumps({"answer": "Le signaler.", "sources": [sent]})]))
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", "--mode", "free",
                         "--passages", "1", "--gate", "off")
    assert code == 0 and "gate:" not in out and "1 call ·" in out
    for bad in ("1.5", "oui", "-0.1"):
        code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", "--gate", bad)
        assert code == 1 and err.startswith("error: --gate is a probability between 0 and 1, or off") and out == ""


@pytest.mark.encoder
def test_index_with_vectors_then_the_hybrid_default(folder, capsys):
    code, out, _ = run(capsys, "index", str(folder))
    assert code == 0 and "passages encoded" in out and " 0 passages encoded" not in out
    code, out, _ = run(capsys, "search", "Combien de jours de vacances ai-je par an ?", "--index", str(folder),
                       "--explain", "--vector-weight", "2")
    assert code == 0 and "hybrid · documents" in out and "vector leg, rank" in out
    assert "conges/conges-payes.pdf" in out


def test_python_m_rungs_search_in_a_real_process(indexed):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "rungs", "search", "congés payés", "--index",
                           str(indexed), "--rung", "bm25", "--limit", "2"],
                          capture_output=True, text=True, env=env, timeout=120, cwd=indexed.parent)
    assert done.returncode == 0, done.stderr
    assert "conges/conges-payes.pdf" in done.stdout.splitlines()[1] and done.stderr == ""
    missing = subprocess.run([sys.executable, "-m", "rungs", "search", "x", "--index", "nowhere"],
                             capture_output=True, text=True, env=env, timeout=120, cwd=indexed.parent)
    assert missing.returncode == 1 and missing.stdout == "" and missing.stderr.count("\n") == 1
    assert "Traceback" not in missing.stderr


def test_search_prints_the_snippet_section_and_page_of_every_hit(indexed, capsys):
    code, out, _ = run(capsys, "search", "entretien préalable", "--index", str(indexed), "--rung", "fts", "--limit", "2")
    lines = out.splitlines()
    assert code == 0 and lines[1].split()[2:4] == ["reglement-interieur.pdf,", "p."]
    # FTS5's own snippet() (ten words, « … » at a cut), under the section that holds it
    assert lines[2].startswith("      § Article 8 – Droits de la défense · …") and "[entretien] [préalable]" in lines[2]
    assert len(lines[2].split(" · ", 1)[1].split()) <= 12
    # every other rung: the best sentence (here a window of it, up to 28 words), marked the same way
    code, out, _ = run(capsys, "search", "entretien préalable", "--index", str(indexed), "--rung", "bm25", "--limit", "1")
    said = out.splitlines()[2].split(" · ", 1)[1]
    assert "p. 3" in out.splitlines()[1] and "[entretien] [préalable]" in said and 12 < len(said.split()) <= 28


def test_ask_help_states_the_time_the_benchmark_measured():
    # `ask --help` quotes a wait: it must be the median bench_folder.py --ask committed, not a hope.
    measured = json.loads((REPO / "benchmarks" / "results" / "folder.json").read_text(encoding="utf-8"))["after"]
    assert cli.ASK_TIME == {"bundled": f"{round(measured['ask_bundled']['median_s'])} s",
                            "folder": f"{round(measured['ask']['median_s'])} s",
                            "measured": measured["ask_bundled"]["date"]}
    shown = cli._parser("ask").format_help()
    assert all(value in shown for value in cli.ASK_TIME.values())


@pytest.mark.parametrize("how", ["option", "setting"])
@pytest.mark.parametrize("script, said", [("not json", "must be a JSON list of replies"), ("5", "not a int")])
def test_a_scripted_reply_that_is_not_a_list_of_replies_is_one_line(indexed, capsys, monkeypatch, how, script, said):
    # A23: `ask --scripted-replies 'not json'` and RUNGS_SCRIPTED_REPLIES=5 printed tracebacks.
    argv = ["ask", "Le badge ?", "--index", str(indexed), "--rung", "bm25"]
    if how == "option":
        argv += ["--scripted-replies", script]
    else:
        monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", script)
    code, out, err = run(capsys, *argv)
    assert code == 1 and err.startswith("error: --scripted-replies") and said in err and "Traceback" not in err


def test_a_bad_fusion_knob_is_refused_before_any_passage_is_encoded(indexed, capsys, monkeypatch):
    # O3: `search --rung hybrid --k nan` over an index made without vectors encoded every passage, then refused k.
    from rungs import vectors
    from rungs.yours import index as folder_index

    class Spy(vectors.Encoder):
        """A test double, not a model: records what it is asked to encode."""

        name, dim, seen = "spy", 4, []

        def _documents(self, texts):
            Spy.seen.extend(texts)
            return [[1.0, len(t), t.count("e") + 1.0, 1.0] for t in texts]

    monkeypatch.setattr(folder_index, "_default_encoder", Spy)
    for knobs, named in ((["--k", "nan"], "k must"), (["--window", "0"], "window"),
                         (["--vector-weight", "-1"], "weights")):
        code, out, err = run(capsys, "search", "congés", "--index", str(indexed), "--rung", "hybrid", *knobs)
        assert code == 1 and out == "" and err.startswith("error: ") and named in err, err
    assert Spy.seen == []
    code, out, err = run(capsys, "search", "congés", "--index", str(indexed), "--rung", "hybrid")
    assert code == 0 and Spy.seen  # the first search that is not refused encodes them, once


def test_index_and_search_help_state_what_the_benchmarks_measured():
    # A claim in help is held to a committed result: the encoding rate bench_folder.py measured, the commands'
    # medians bench_commands.py measured.
    folder = json.loads((REPO / "benchmarks" / "results" / "folder.json").read_text(encoding="utf-8"))["after"]
    assert cli.INDEX_TIME == {"per_second": f"{round(folder['index']['passages_per_s'])}",
                              "encoding": f"{round(folder['index']['encoding_s'])} s",
                              "passages": f"{folder['index']['passages']:,}", "measured": folder["date"]}
    commands = json.loads((REPO / "benchmarks" / "results" / "commands.json").read_text(encoding="utf-8"))["after"]
    assert cli.SEARCH_TIME == {rung: f"{commands['rungs'][rung]['wall_s']['median']:.1f} s" for rung in ("fts", "hybrid")} \
        | {"measured": commands["date"]}
    for command, said in (("index", cli.INDEX_TIME), ("search", cli.SEARCH_TIME)):
        shown = " ".join(cli._parser(command).format_help().split())
        assert all(value in shown for value in said.values()), command


#: What a search never needs: a data frame, a compiled loop, a neural library, a plot, a bar, the file readers.
HEAVY = ("scipy", "pandas", "numba", "torch", "sentence_transformers", "matplotlib", "tqdm", "rungs.yours.readers")


def _imported_by_a_search(indexed, rung):
    code = ("import contextlib, io, runpy, sys\n"
            f"sys.argv = ['rungs', 'search', 'congés payés', '--index', {str(indexed)!r}, '--rung', {rung!r}]\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            "    runpy.run_module('rungs', run_name='__main__')\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=indexed.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("rung", ["fts", "bm25"])
def test_a_keyword_search_imports_nothing_heavy(indexed, rung):
    assert _imported_by_a_search(indexed, rung) == "[]"


@pytest.mark.encoder
def test_a_vector_search_imports_nothing_heavy_either(folder, capsys):
    assert run(capsys, "index", str(folder))[0] == 0  # with its vectors: a search as it runs every day after
    assert [_imported_by_a_search(folder, rung) for rung in ("vectors", "hybrid")] == ["[]", "[]"]


def test_an_index_run_in_a_notebook_saves_one_finished_line_per_bar(folder):
    # The one progress bar (rungs.core.display.progress, tqdm underneath): in a kernel, one plain-text output per bar,
    # updated in place, saved in its last state — never tqdm's « 0% » widget, never a smear of carriage returns.
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from rungs.yours.index import index_folder\n"
                                          f"index_folder({str(folder)!r}, vectors=False, progress=True).close()")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = [o for o in nb.cells[0].outputs if o.output_type != "stream" or o.name != "stdout"]
    texts = [o["data"]["text/plain"] for o in outputs if "data" in o]
    assert len(outputs) == len(texts) == 1, outputs
    assert texts[0].startswith("reading: 16/16 (100 %) in ") and "\r" not in texts[0]


def test_outside_a_terminal_and_a_notebook_a_bar_says_its_last_line_once(capsys):
    from rungs.core.display import progress

    assert list(progress(range(3), desc="sweep", every=0)) == [0, 1, 2]
    bar = progress(desc="encoding", unit="passage", leave=False)
    bar.reset(total=4)
    bar.update(4)
    bar.close()
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("sweep: 3/3 (100 %) in ") and err.count("\n") == 1  # leave=False: nothing


def test_ask_gate_prints_enough_digits_never_to_contradict_its_decision(indexed, capsys, monkeypatch):
    """Finding: P(yes) = 0.4999 against --gate 0.5 was printed « = 0.50, threshold 0.50: below it »."""
    monkeypatch.setenv("RUNGS_SCRIPTED_REPLIES", json.dumps([_gate_reply(0.4999)]))
    code, out, err = run(capsys, "ask", "Que faire d'un badge perdu ?", "--index", str(indexed), "--rung", "bm25",
                         "--gate", "0.5", "--mode", "pointing-lead")
    assert code == 0 and "= 0.4999, threshold 0.5000: below it" in out, out


def _one_file_indexed(tmp_path, monkeypatch, capsys, text: str):
    """A folder of one Markdown file holding ``text``, indexed (no vectors): its path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("RUNGS_SCRIPTED_REPLIES", raising=False)
    root = tmp_path / "docs"
    root.mkdir()
    (root / "badge.md").write_text(text, encoding="utf-8")
    assert run(capsys, "index", str(root), "--no-vectors")[0] == 0
    return root


def test_what_documents_and_the_model_say_is_printed_without_its_terminal_controls(tmp_path, capsys, monkeypatch):
    """Finding: an indexed file holding « \\x1b[2J » cleared the learner's screen when `ask` or `search` printed it."""
    from rungs.yours.index import open_index

    root = _one_file_indexed(tmp_path, monkeypatch, capsys, "# Badge\x1b[2J perdu\n\nUn badge perdu se signale "
                             "à l'accueil\x1b[31m, sans délai.\x9b\n")
    question = "Que faire d'un badge perdu ?"
    code, out, err = run(capsys, "search", question, "--index", str(root), "--rung", "bm25", "--passages")
    assert code == 0 and "\x1b" not in out and "\x9b" not in out and "\\x1b" in out, out
    sent = open_index(root).retriever("bm25").search(question, limit=1, level="passage")[0].id
    reply = json.dumps({"answer": "Le signaler\x1b[2J\r à l'accueil.", "sources": [sent]})
    code, out, err = run(capsys, "ask", question, "--index", str(root), "--rung", "bm25", "--passages", "1",
                         "--mode", "free", "--scripted-replies", json.dumps([reply]))
    assert code == 0, err
    assert "\x1b" not in out and "\r" not in out and "Le signaler\\x1b[2J\\x0d à l'accueil." in out, out
    assert "Badge\\x1b[2J perdu" in out  # the title too


def test_bidi_controls_from_documents_and_the_model_are_printed_as_escapes(tmp_path, capsys, monkeypatch):
    """Finding (issue 43): a right-to-left override (U+202E) in a document or a reply reordered the printed line."""
    root = _one_file_indexed(tmp_path, monkeypatch, capsys, "# Badge \u202eudrep\u202c\n\nUn badge perdu se "
                             "signale à l'accueil\u2067, sans délai\u200f.\n")
    code, out, err = run(capsys, "search", "badge perdu", "--index", str(root), "--rung", "bm25", "--passages")
    assert code == 0 and not any(c in out for c in "\u202e\u202c\u2067\u200f"), out
    assert "Badge \\u202eudrep\\u202c" in out
    from rungs.core.display import safe_text

    assert safe_text("a\u061cb\u2066c\u2069" + "\udce9") == "a\\u061cb\\u2066c\\u2069\\udce9"


def test_the_question_is_echoed_without_its_terminal_controls(tmp_path, capsys, monkeypatch):
    """Probe (issue 43): `ask` echoed « question: … » with the question's escapes raw (one pasted from a file)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("RUNGS_SCRIPTED_REPLIES", raising=False)
    root = tmp_path / "docs"
    root.mkdir()
    (root / "badge.md").write_text("# Badge\n\nUn badge perdu se signale à l'accueil.\n", encoding="utf-8")
    assert run(capsys, "index", str(root), "--no-vectors")[0] == 0
    reply = json.dumps({"answer": "Je ne sais pas.", "sources": []})
    code, out, err = run(capsys, "ask", "Badge\x1b[2J \u202eperdu ?", "--index", str(root), "--rung", "bm25",
                         "--passages", "1", "--mode", "free", "--scripted-replies", json.dumps([reply]))
    assert code == 0, err
    assert "\x1b" not in out and "\u202e" not in out and "question: Badge\\x1b[2J \\u202eperdu ?" in out, out


def test_ask_with_a_shipped_decision_that_cannot_be_read_is_one_line_before_any_call(indexed, capsys, monkeypatch,
                                                                                       tmp_path):
    # hE: an empty (or truncated, or removed) rungs/rag/decision.json printed a JSONDecodeError traceback, after
    # the gate's call was paid.
    from rungs.rag import decision
    broken = tmp_path / "decision.json"
    broken.write_text("", encoding="utf-8")
    monkeypatch.setattr(decision, "SHIPPED", broken)
    decision.shipped.cache_clear()
    try:
        code, out, err = run(capsys, "ask", "Que faire d'un badge perdu ?", "--index", str(indexed), "--rung", "bm25",
                             "--scripted-replies", json.dumps([_gate_reply(0.9)]))
    finally:
        decision.shipped.cache_clear()
    assert code == 1 and err.startswith("error: the shipped decision decision.json cannot be read") and \
        err.count("\n") == 1, err


def test_ask_at_a_tiny_coverage_does_not_say_it_answers_none(indexed, capsys):
    # hE: --coverage 1e-300 printed « set to answer 0% of the questions », though its threshold answers the one
    # question ranked first of those it was fitted on.
    code, out, err = run(capsys, "ask", "Que faire d'un badge perdu ?", "--index", str(indexed), "--rung", "bm25",
                         "--coverage", "1e-300", "--scripted-replies", json.dumps([_gate_reply(0.9)]))
    assert code == 0, err
    assert "set to answer 1e-300 of the questions" in out and "answer 0% of" not in out


def _asked(monkeypatch):
    """The answers ``ask`` printed, caught as the reader returned them."""
    from rungs import rag

    caught, ask = [], rag.Rag.ask
    monkeypatch.setattr(rag.Rag, "ask", lambda self, question: caught.append(ask(self, question)) or caught[-1])
    return caught


@pytest.mark.parametrize("argv, replies", [
    (["--mode", "pointing-lead", "--gate", "0.5"], [_gate_reply(0.2)]),  # no answer: the gate's reading, why
    (["--coverage", "0.3"], [_gate_reply(0.05)]),  # copy: the decision's reading, the coverage it was set for
    (["--mode", "quoted", "--passages", "1"], None),  # answered: a quote with its file and page
])
def test_ask_prints_the_answer_line_for_line_as_answer_lines_does(indexed, capsys, monkeypatch, argv, replies):
    """One printer (``rungs.grounding.showing``): the lines ``ask`` shows of an answer are ``Answer.lines()``,
    in order, terminal-safe — never a wording of the command line's own."""
    from rungs.core.display import safe_text
    from rungs.yours.index import open_index

    question = "Que faire d'un badge perdu ?"
    if replies is None:
        hit = open_index(indexed).retriever("bm25").search(question, limit=1, level="passage")[0]
        words = " ".join(open_index(indexed).retriever("bm25").meta[hit.id]["body"].split()[:6])
        replies = [json.dumps({"answer": "Voir le passage.", "quotes": [{"source": hit.id, "text": words}]})]
    caught = _asked(monkeypatch)
    code, out, err = run(capsys, "ask", question, "--index", str(indexed), "--rung", "bm25", *argv,
                         "--scripted-replies", json.dumps(replies))
    assert code == 0, err
    shown = safe_text("\n".join(caught[0].lines())).split("\n")
    lines = out.splitlines()
    at = lines.index(shown[0])
    assert lines[at:at + len(shown)] == shown, out
    from rungs.core.display import where
    for q in caught[0].quotes:  # a quote's place is its file (and page), as the hit it came from says it
        assert any(line.endswith(f"» ({where(next(h for h in caught[0].hits if h.id == q.source))})") for line in shown)


def test_ask_under_replay_with_a_replay_file_not_utf8_is_one_line_naming_it(indexed, capsys, monkeypatch, tmp_path):
    # Issue 43 (A): a replay file that is not UTF-8 raised UnicodeDecodeError from `ask` under RUNGS_REPLAY=replay.
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"key": "k", "kind": "chat", "reply": {"text": "congés"}}\n'.encode("latin-1"))
    monkeypatch.setenv("RUNGS_REPLAY", "replay")
    monkeypatch.setenv("RUNGS_REPLAY_FILE", str(latin))
    code, out, err = run(capsys, "ask", "Que faire d'un badge perdu ?", "--index", str(indexed), "--rung", "bm25")
    assert code == 1 and err.startswith("error: ") and "latin.jsonl is not UTF-8" in err, err
    assert "Traceback" not in err and err.count("\n") == 1, err
