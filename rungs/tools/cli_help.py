"""What ``python -m rungs index | search | ask --help`` says under the options: how each command works, what
it costs as measured, and examples.

What it is for: the help is a lesson too, and its times are measurements (each dict names the benchmark and
results file it comes from; tests/test_cli.py holds each to that file). Kept apart from ``rungs.tools.cli`` so
the commands fit in one reading.

Cost: none (text).
"""

EXAMPLES_INDEX = """\
what it costs: encoding every passage for the vector leg is the slow part (USE, one thread: about
{per_second} passages of 1,500 characters a second on benchmarks/folder, {encoding} for its {passages}
passages, measured {measured}); reading is quicker (PDFium: a few hundred pages a second).
The passages are encoded on every physical core, one worker process each (RUNGS_ENCODER_PROCESSES=N
caps them; 1: this process only), the vectors bit for bit those of one process. On a quiet two-core
machine it encoded {pool} the passages a second of one process (benchmarks/results/encoding.json,
measured {pool_measured}); on a machine busy with other work it gains nothing.
--no-vectors skips the encoding.
Run it again after you change the folder: an unchanged file costs one stat, a changed one is read
and encoded again, a removed one is removed. Interrupted (Ctrl-C), the previous index stays whole.

example:
  python -m rungs index notebooks/data/my-documents
  python -m rungs index ~/Documents/rh --size 800 --overlap 100     # shorter passages: every file re-read
"""

EXAMPLES_SEARCH = """\
the rungs: fts (SQLite's own bm25(), N0), bm25 (N1: every word's part shown with --explain),
vectors (N2: meaning, not words; loads the encoder), hybrid (N2: both, fused by RRF; the default).
Results are documents (passages rolled up: --rollup max or sum) unless --passages.
what it costs: a whole `search` on benchmarks/folder, in a fresh process, took {fts} with fts and
{hybrid} with hybrid at the median (measured {measured}); most of it is Python starting and the index
loading, a query itself a few milliseconds.

examples:
  python -m rungs search "combien de jours de congés ?"
  python -m rungs search "badge perdu" --rung bm25 --explain
  python -m rungs search "travailler de chez moi" --rung hybrid --k 10 --vector-weight 2 --passages
"""

EXAMPLES_ASK = """\
the passages are found by the hybrid rung (or --rung), the best --passages of them (at most 4) are
cut into sentences, and the 12 that match the question best are read. By default no model writes:
the 3 sentences that match best are copied, each printed with its file, page and a link that opens
the file at that page — if the decision says they answer. The decision asks the model one yes/no
question (do these sentences answer?) and weighs its P(yes) with how well the sentences match the
question: below the threshold set for --coverage (the share of questions answered, 0.5 where it was
chosen, on the handbook), « je ne sais pas ». Every decision is printed with its probability and
where it came from. --mode pointing-lead lets the model choose the sentences and write a few words.
what it costs: one call to the model, one token written (the decision's yes/no question) — the local
model (starts once, ~3 GB of memory) or the one OPENAI_BASE_URL / RUNGS_MODEL name; reading the 12
sentences is most of it: {bundled} at the median on one thread (the portable build) for a question on
notebooks/data/my-documents, {folder} on benchmarks/folder, in a fresh process (measured {measured}).
--mode pointing-lead has the model write too: seconds more; --decision off, no call at all.

example:
  python -m rungs ask "Avant quelle date faut-il poser ses congés d'été ?"
  python -m rungs ask "Combien de jours de RTT ?" --coverage 0.8      # answer more often, wrong more often
  python -m rungs ask "Combien de jours de RTT ?" --decision off      # no model at all: always the copy
  python -m rungs ask "Combien de jours de RTT ?" --mode quoted       # the model writes, and quotes
"""
#: Measured: ``python -m rungs ask`` in a fresh process, one thread, the server started (benchmarks/bench_folder.py
#: --ask, results/folder.json « ask_bundled » and « ask »; benchmarks/README.md, « Your folder at real size »).
ASK_TIME = {"bundled": "13 s", "folder": "9 s", "measured": "2026-12-07"}
#: Measured: ``python -m rungs index`` of benchmarks/folder, encoding alone (benchmarks/bench_folder.py,
#: results/folder.json « after », « index »).
INDEX_TIME = {"per_second": "46", "encoding": "53 s", "passages": "2,430", "measured": "2026-12-02"}
#: Measured: the encoding pool against one process, in one interleaved run (benchmarks/bench_encoding.py,
#: results/encoding.json « ratio_to_in_process », « pool »; benchmarks/README.md, « Encoding on every core »).
POOL_TIME = {"pool": "1.5×", "pool_measured": "2026-12-08"}
#: Measured: ``python -m rungs search`` in fresh processes, the median (benchmarks/bench_commands.py,
#: results/commands.json « after »; benchmarks/README.md, « Commands in a moment »).
SEARCH_TIME = {"fts": "0.2 s", "hybrid": "0.5 s", "measured": "2026-12-02"}
