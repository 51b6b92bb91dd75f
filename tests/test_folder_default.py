"""The stored folder-default measurement as notebooks 02 and 07 read it (``rungs.lab.folder_default``).

The table a notebook shows must be the stored questions' hits, the questions « no candidate finds » must be the
ones the hits say, and the candidate the protocol kept must be the default the package ships for a folder.
"""

import json

import pytest

from rungs import hybrid
from rungs.lab import folder_default


@pytest.fixture(scope="module")
def results():
    return folder_default.load()


def test_each_cell_of_the_table_is_the_share_of_its_stored_hits(results):
    shares = folder_default.table(results)
    hits = folder_default.per_question(results)
    for column in shares.columns.drop("eligible"):
        cell, count = column.rsplit(" (", 1)
        rows = hits[hits["cell"] == cell]
        assert len(rows) == int(count.rstrip(")"))
        for name in results["candidates"]:
            assert shares.loc[name, column] == pytest.approx(rows[name].mean()), (name, cell)
    assert list(shares.index[shares["eligible"]]) == results["eligible"]


def test_the_questions_no_candidate_finds_are_those_the_hits_say(results):
    lost = folder_default.unfound(results)
    assert sorted(lost.index) == sorted(results["no_candidate_finds"])
    paraphrases = folder_default.unfound(results, cell="handbook/paraphrase")
    assert set(paraphrases.index) <= set(lost.index) and set(paraphrases["cell"]) == {"handbook/paraphrase"}


def test_the_kept_candidate_is_the_default_a_folder_gets(results):
    kept = results["candidates"][results["protocol"]["chosen"]]
    shipped = hybrid.YOUR_DOCUMENTS
    assert (kept["method"], kept["k"], kept["leg_weights"]) == (shipped["method"], shipped["k"], shipped["leg_weights"])


def test_a_damaged_file_is_refused_naming_the_part(tmp_path, results):
    damaged = dict(results, questions=[{**results["questions"][0], "hits": [1]}])  # one hit for ten candidates
    path = tmp_path / "folder_default.json"
    path.write_text(json.dumps(damaged), encoding="utf-8")
    with pytest.raises(folder_default.NoResults, match=r"results\['questions'\]\[0\]"):
        folder_default.load(path)
    with pytest.raises(folder_default.NoResults, match="bench_folder_default"):
        folder_default.load(tmp_path / "absent.json")
