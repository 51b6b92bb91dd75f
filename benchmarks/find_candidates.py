"""Candidate pages for a blind judging pass: what pooling may have missed.

Pooling (``pool_judgments.py``) judges only the pages some system ranked in its
top 10, so a page that states the answer in words no system matched stays
unjudged, and an unjudged page counts as not relevant. This lists, for every
question, the pages that look as if they could answer it and that nobody has
judged yet:

- a page that contains one of the question's key facts (any variant), found
  by the answer mark's own matcher (``rungs.lab.answers``: folded, stemmed,
  numbers and units as people write them); variants that are only « oui » or
  « non » are skipped (a page containing « oui » does not share a yes/no answer);
- or a page that shares at least two content words with the reference answer:
  folded words, French stop words and a few function words out, each cut to
  its first five letters (« signalé » and « signaler » are one word; numbers
  match only exactly);
- or a page that shares at least two such words with the question itself: the
  only test an unanswerable question gets (it has no reference answer and no
  key facts), and for the others the pages a reader would open from the
  question's own words.

Known limit: a page that carries an exception in other words (on-call staff
« restent joignables le soir » against a question about a message at 23 h)
shares neither; only a reader who goes through every page's title finds it.

    .venv/bin/python benchmarks/find_candidates.py [HANDBOOK] [--json FILE] [--all]

``HANDBOOK`` (a folder with ``pages/`` and ``questions.jsonl``) defaults to the
one the package ships. Without ``--all`` only unjudged pages are listed (pages
already in ``judgments`` were read by a judge); with it, judged pages are listed
too, marked. Printed: one line per (question, page) with the reasons, then
totals. Nothing here reads a grade — which pages are judged is all it uses —
so the pass stays blind. The pass of this edition is in
``results/blind_pass.jsonl`` (1,115 pages read, all 0; rungs/lab/data/handbook/README.md).
Cost: well under a minute.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rungs.core.documents import page_text  # noqa: E402
from rungs.core.text import FRENCH_STOPWORDS, tokenise  # noqa: E402
from rungs.lab import answers  # noqa: E402
from rungs.lab.handbook import HANDBOOK, load_pages, load_questions  # noqa: E402

#: Words too common in this handbook to say anything about a topic (« jours », « salarié » are kept: they
#: can be facts), beside the French stop words.
FUNCTION_WORDS = frozenset("""oui non si plus moins tout tous toute toutes autre autres chaque aussi
comme entre apres avant puis peut peuvent pouvez doit doivent dont ainsi ni sous chez vers lors alors quand
comment combien""".split())
#: A yes/no answer is said by these; a page containing « oui » does not share it.
POLARITY = {"oui", "non"}
PREFIX = 5


def content_roots(text: str | None) -> set[str]:
    """Content words of ``text``: stop words out, each cut to its first five letters; numbers kept whole."""
    # Numbers as the answer mark reads them (« 2,5 », « 1 140 », « trois » whole), but not « un », « une »
    # (here the article far more often than the number) nor « premier » (a word root below).
    spelled = re.sub(r"\b(?:une?|premiere?|première)\b", " ", text or "", flags=re.IGNORECASE)
    numbers = {w for w in answers.answer_words(spelled)
               if w[0].isdigit()}
    words = {w[:PREFIX] for w in tokenise(text, stopwords=FRENCH_STOPWORDS | FUNCTION_WORDS)
             if len(w) >= 3 and not any(c.isdigit() for c in w) and w not in answers.NUMBER_WORDS}
    return numbers | words


def candidates(question: dict, pages: list[dict], include_judged: bool = False) -> list[dict]:
    """The pages that share a key fact, or two content roots of the reference answer or the question."""
    answer_roots = content_roots(question.get("answer"))
    question_roots = content_roots(question["question"])
    variants = [v.strip() for fact in answers.key_facts(question) for v in fact.split("|")]
    variants = [v for v in variants if answers.answer_words(v) and not set(answers.answer_words(v)) <= POLARITY]
    out = []
    for page in pages:
        judged = page["id"] in question["judged"]
        if judged and not include_judged:
            continue
        text = page_text(page)
        words = answers.answer_words(text)
        facts = [v for v in variants if answers.found_in(v, words)]
        page_roots = content_roots(text)
        shared = sorted(answer_roots & page_roots)
        asked = sorted(question_roots & page_roots)
        if facts or len(shared) >= 2 or len(asked) >= 2:
            out.append({"qid": question["id"], "page": page["id"], "judged": judged, "key_facts": facts,
                        "answer_roots": shared if len(shared) >= 2 else [],
                        "question_roots": asked if len(asked) >= 2 else []})
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("handbook", type=Path, nargs="?", default=HANDBOOK,
                        help="folder with pages/ and questions.jsonl (default: the shipped handbook)")
    parser.add_argument("--json", type=Path, help="also write the candidates as JSON lines to this file")
    parser.add_argument("--all", action="store_true", help="list judged pages too")
    args = parser.parse_args(argv)
    pages = load_pages(args.handbook / "pages")
    questions = load_questions(args.handbook / "questions.jsonl")
    found = [c for q in questions for c in candidates(q, pages, args.all)]
    for c in found:
        why = []
        if c["key_facts"]:
            why.append("key fact " + " / ".join(f"« {f} »" for f in c["key_facts"]))
        if c["answer_roots"]:
            why.append("answer roots " + ", ".join(c["answer_roots"]))
        if c["question_roots"]:
            why.append("question roots " + ", ".join(c["question_roots"]))
        print(f"{c['qid']}\t{c['page']}{' (judged)' if c['judged'] else ''}\t{'; '.join(why)}")
    if args.json:
        with args.json.open("w", encoding="utf-8") as out:
            for c in found:
                out.write(json.dumps(c, ensure_ascii=False) + "\n")
    unjudged = [c for c in found if not c["judged"]]
    by_fact = sum(1 for c in unjudged if c["key_facts"])
    by_answer = sum(1 for c in unjudged if c["key_facts"] or c["answer_roots"])
    print(f"\n{len(unjudged)} unjudged candidate pairs over {len({c['qid'] for c in unjudged})} of "
          f"{len(questions)} questions: {by_fact} share a key fact, {by_answer} a key fact or two answer "
          f"roots, {len(unjudged) - by_answer} only two roots of the question", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
