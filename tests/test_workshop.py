"""``python -m rungs workshop``: a learner's copy is made, updated, reset, and nothing they typed is lost."""

import json
import subprocess
import sys

import pytest

from rungs.tools import workshop


def _nb(*sources, outputs=True):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# A rung"}]
    for n, src in enumerate(sources, start=1):
        cells.append({"cell_type": "code", "metadata": {}, "source": src, "execution_count": n if outputs else None,
                      "outputs": [{"output_type": "stream", "name": "stdout", "text": "out\n"}] if outputs else []})
    return {"cells": cells, "metadata": {"widgets": {"state": {}}}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def source(tmp_path):
    """A small collection: two notebooks with committed outputs and a data folder."""
    src = tmp_path / "collection"
    (src / "data").mkdir(parents=True)
    (src / "00_first.ipynb").write_text(json.dumps(_nb("print(1)")), encoding="utf-8")
    (src / "01_second.ipynb").write_text(json.dumps(_nb("x = 2", "print(x)")), encoding="utf-8")
    (src / "data" / "words.txt").write_text("congés\n", encoding="utf-8")
    return src


def _edit(path, new_source):
    nb = json.loads(path.read_text(encoding="utf-8"))
    nb["cells"][1]["source"] = new_source
    path.write_text(json.dumps(nb), encoding="utf-8")


def _lines(capsys):
    return dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines() if not line.startswith("("))


def test_first_copy_clears_outputs_counts_and_widget_state(source, tmp_path, capsys):
    ws = tmp_path / "ws"
    assert workshop.main([str(ws), "--source", str(source)]) == 0
    assert _lines(capsys) == {"00_first.ipynb": "copied", "01_second.ipynb": "copied", "data/words.txt": "copied"}
    nb = json.loads((ws / "01_second.ipynb").read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c["outputs"] for c in code] == [[], []] and [c["execution_count"] for c in code] == [None, None]
    assert "widgets" not in nb["metadata"]
    assert (ws / "data" / "words.txt").read_text(encoding="utf-8") == "congés\n"


def test_a_second_run_with_nothing_changed_writes_nothing(source, tmp_path, capsys):
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    capsys.readouterr()
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in ws.rglob("*") if p.is_file()}
    workshop.main([str(ws), "--source", str(source)])
    assert set(_lines(capsys).values()) == {"unchanged"}
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in ws.rglob("*") if p.is_file()}
    assert after == before


def test_copy_edit_update_loses_nothing(source, tmp_path, capsys):
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    _edit(ws / "01_second.ipynb", "x = 'my own work'")          # the learner types
    _edit(source / "01_second.ipynb", "x = 3  # fixed upstream")  # the instructor fixes both notebooks
    _edit(source / "00_first.ipynb", "print('fixed')")
    capsys.readouterr()

    workshop.main([str(ws), "--source", str(source)])
    lines = _lines(capsys)
    assert lines["00_first.ipynb"] == "updated"
    assert lines["01_second.ipynb"] == "kept your version, the new one is beside it: 01_second.new.ipynb"
    assert lines["data/words.txt"] == "unchanged"
    assert "my own work" in (ws / "01_second.ipynb").read_text(encoding="utf-8")
    assert "fixed upstream" in (ws / "01_second.new.ipynb").read_text(encoding="utf-8")
    assert "fixed" in (ws / "00_first.ipynb").read_text(encoding="utf-8")

    # Again with nothing new: the learner's file and the one beside it stay as they are, and it says so.
    workshop.main([str(ws), "--source", str(source)])
    lines = _lines(capsys)
    assert lines["01_second.ipynb"].startswith("kept your version (the new one is already beside it")
    assert "my own work" in (ws / "01_second.ipynb").read_text(encoding="utf-8")


def test_running_and_saving_is_not_an_edit(source, tmp_path, capsys):
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    nb = json.loads((ws / "00_first.ipynb").read_text(encoding="utf-8"))
    nb["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1\n"}]
    nb["metadata"]["kernelspec"] = {"name": "python3"}  # what JupyterLab adds on save
    (ws / "00_first.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    capsys.readouterr()

    workshop.main([str(ws), "--source", str(source)])
    assert _lines(capsys)["00_first.ipynb"] == "unchanged"           # no new version: their outputs stay
    _edit(source / "00_first.ipynb", "print('v2')")
    workshop.main([str(ws), "--source", str(source)])
    assert _lines(capsys)["00_first.ipynb"].startswith("updated (your outputs were cleared")


def test_a_learner_edit_of_the_new_file_is_never_overwritten(source, tmp_path, capsys):
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    _edit(ws / "01_second.ipynb", "mine")
    _edit(source / "01_second.ipynb", "v2")
    workshop.main([str(ws), "--source", str(source)])
    _edit(ws / "01_second.new.ipynb", "mine too")  # the learner started merging in the .new file
    _edit(source / "01_second.ipynb", "v3")
    capsys.readouterr()
    workshop.main([str(ws), "--source", str(source)])
    assert _lines(capsys)["01_second.ipynb"].endswith("01_second.new-2.ipynb")
    assert "mine too" in (ws / "01_second.new.ipynb").read_text(encoding="utf-8")
    assert "v3" in (ws / "01_second.new-2.ipynb").read_text(encoding="utf-8")


def test_reset_gives_a_clean_copy_and_keeps_a_backup(source, tmp_path, capsys):
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    _edit(ws / "01_second.ipynb", "broken beyond repair")
    capsys.readouterr()
    assert workshop.main([str(ws), "--source", str(source), "--reset", "01"]) == 0
    assert _lines(capsys) == {"01_second.ipynb": "reset to a clean copy; your version is kept as 01_second.backup.ipynb"}
    assert "broken beyond repair" in (ws / "01_second.backup.ipynb").read_text(encoding="utf-8")
    assert "x = 2" in (ws / "01_second.ipynb").read_text(encoding="utf-8")

    # A second reset of a clean copy does nothing; the next update sees an untouched copy.
    workshop.main([str(ws), "--source", str(source), "--reset", "01_second.ipynb"])
    assert _lines(capsys) == {"01_second.ipynb": "already a clean copy"}
    workshop.main([str(ws), "--source", str(source)])
    assert _lines(capsys)["01_second.ipynb"] == "unchanged"
    # The side files of a workspace are never handed out as notebooks of their own.
    assert "01_second.backup.ipynb" not in workshop.planned(ws)


def test_reset_names_the_notebooks_when_the_name_is_wrong(source, tmp_path, capsys):
    assert workshop.main([str(tmp_path / "ws"), "--source", str(source), "--reset", "07"]) == 1
    assert "00_first.ipynb, 01_second.ipynb" in capsys.readouterr().out


def test_the_real_collection_copies(tmp_path):
    """The collection's own notebooks, through the command learners type."""
    out = subprocess.run([sys.executable, "-m", "rungs", "workshop", str(tmp_path / "ws")],
                         capture_output=True, text=True, check=True).stdout
    names = sorted(p.name for p in workshop.notebooks().glob("*.ipynb"))
    assert [line.split()[0] for line in out.splitlines()[:len(names)]] == names
    assert all(line.split(None, 1)[1] == "copied" for line in out.splitlines()[:len(names)])
    assert "handbook is read from the rungs package" in out


def test_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        workshop.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--reset NOTEBOOK" in out and "never overwritten" in out and "handbook" in out


@pytest.mark.parametrize("manifest", [b"[]", b"\xff\xfe not utf-8", b"[" * 100_000, b'{"files": [], "beside": 5}',
                                      b'{"files": {"00_first.ipynb": 5}}', b'"just text"', b"null"])
def test_a_damaged_manifest_keeps_every_file_and_says_nothing_raw(source, tmp_path, capsys, manifest):
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    _edit(source / "00_first.ipynb", "print('v2')")  # a new version while the manifest cannot be read
    (ws / workshop.MANIFEST).write_bytes(manifest)
    capsys.readouterr()
    assert workshop.main([str(ws), "--source", str(source)]) == 0
    lines = _lines(capsys)
    # Without a manifest, an edit cannot be told from a copy: the learner's file is kept, the new one beside it.
    assert lines["00_first.ipynb"].startswith("kept your version") and "print(1)" in (ws / "00_first.ipynb").read_text()
    assert json.loads((ws / workshop.MANIFEST).read_text(encoding="utf-8"))["files"]  # written whole again


def test_a_learners_notebook_nested_past_the_stack_is_kept(source, tmp_path, capsys):
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    (ws / "00_first.ipynb").write_text("[" * 100_000, encoding="utf-8")
    _edit(source / "00_first.ipynb", "print('v2')")
    capsys.readouterr()
    assert workshop.main([str(ws), "--source", str(source)]) == 0
    assert _lines(capsys)["00_first.ipynb"].startswith("kept your version")
    assert (ws / "00_first.ipynb").read_text(encoding="utf-8") == "[" * 100_000


def test_a_workspace_inside_the_sources_data_does_not_copy_itself(source, capsys):
    ws = source / "data" / "atelier"
    counts = []
    for _ in range(3):
        assert workshop.main([str(ws), "--source", str(source)]) == 0
        counts.append(sum(1 for p in ws.rglob("*") if p.is_file()))
    assert counts[0] == counts[1] == counts[2], counts
    assert not (ws / "data" / "atelier").exists()


@pytest.mark.parametrize("edit", ["tags", "metadata"])
def test_an_edit_of_cell_tags_or_metadata_is_an_edit(source, tmp_path, capsys, edit):
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    nb = json.loads((ws / "01_second.ipynb").read_text(encoding="utf-8"))
    if edit == "tags":
        nb["cells"][1]["metadata"]["tags"] = ["exercise-done"]
    else:
        nb["cells"][1]["metadata"]["editable"] = False
    (ws / "01_second.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    _edit(source / "01_second.ipynb", "x = 3  # fixed upstream")
    capsys.readouterr()
    workshop.main([str(ws), "--source", str(source)])
    assert _lines(capsys)["01_second.ipynb"].startswith("kept your version")
    kept = json.loads((ws / "01_second.ipynb").read_text(encoding="utf-8"))
    assert kept["cells"][1]["metadata"] == nb["cells"][1]["metadata"]


def test_a_workspace_made_before_metadata_counted_still_receives_updates(source, tmp_path, capsys):
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    manifest = json.loads((ws / workshop.MANIFEST).read_text(encoding="utf-8"))
    # What an older rungs wrote: a hash of the cells' kinds and sources only, and no version.
    old = {rel: workshop.fingerprint(ws / rel, notebook=True, version=1) if rel.endswith(".ipynb") else fp
           for rel, fp in manifest["files"].items()}
    (ws / workshop.MANIFEST).write_text(json.dumps({"files": old, "beside": {}}), encoding="utf-8")
    _edit(source / "00_first.ipynb", "print('v2')")
    capsys.readouterr()
    workshop.main([str(ws), "--source", str(source)])
    assert _lines(capsys)["00_first.ipynb"] == "updated"


@pytest.mark.parametrize("edit", ["an image pasted into a markdown cell", "a new picture in that cell's place",
                                  "the notebook's metadata"])
def test_an_attachment_or_the_notebooks_metadata_is_an_edit(source, tmp_path, capsys, edit):
    # D4: only the cells' kinds, sources and metadata were hashed: a pasted image (a cell attachment) or
    # the notebook's own metadata was overwritten by the next update, with no .new file and no backup.
    ws = tmp_path / "ws"
    png = {"image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="}
    if edit == "a new picture in that cell's place":  # the collection's cell already shows an attachment
        nb = json.loads((source / "01_second.ipynb").read_text(encoding="utf-8"))
        nb["cells"][0].update(source="![schéma](attachment:schema.png)", attachments={"schema.png": png})
        (source / "01_second.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    workshop.main([str(ws), "--source", str(source)])
    nb = json.loads((ws / "01_second.ipynb").read_text(encoding="utf-8"))
    if edit == "the notebook's metadata":
        nb["metadata"]["title"] = "Mes notes du lundi"
    else:  # the same source text, another image under the same name: only the attachment changed
        nb["cells"][0]["attachments"] = {"schema.png": {"image/png": png["image/png"][::-1]}}
    (ws / "01_second.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    _edit(source / "01_second.ipynb", "x = 3  # fixed upstream")
    capsys.readouterr()
    workshop.main([str(ws), "--source", str(source)])
    assert _lines(capsys)["01_second.ipynb"] == "kept your version, the new one is beside it: 01_second.new.ipynb"
    assert json.loads((ws / "01_second.ipynb").read_text(encoding="utf-8")) == nb
    assert "fixed upstream" in (ws / "01_second.new.ipynb").read_text(encoding="utf-8")


def test_a_workspace_whose_manifest_hashed_cell_metadata_still_receives_updates(source, tmp_path, capsys):
    # The manifests written before attachments and the notebook's metadata counted (version 2): an untouched
    # notebook is still told from an edited one, and updated.
    ws = tmp_path / "ws"
    workshop.main([str(ws), "--source", str(source)])
    manifest = json.loads((ws / workshop.MANIFEST).read_text(encoding="utf-8"))
    old = {rel: workshop.fingerprint(ws / rel, notebook=True, version=2) if rel.endswith(".ipynb") else fp
           for rel, fp in manifest["files"].items()}
    (ws / workshop.MANIFEST).write_text(json.dumps({"files": old, "beside": {}, "version": 2}), encoding="utf-8")
    _edit(ws / "01_second.ipynb", "x = 'my own work'")
    _edit(source / "00_first.ipynb", "print('v2')")
    _edit(source / "01_second.ipynb", "x = 3  # fixed upstream")
    capsys.readouterr()
    workshop.main([str(ws), "--source", str(source)])
    lines = _lines(capsys)
    assert lines["00_first.ipynb"] == "updated" and lines["01_second.ipynb"].startswith("kept your version")
    assert json.loads((ws / workshop.MANIFEST).read_text(encoding="utf-8"))["version"] == workshop.FINGERPRINT


def test_a_workspace_or_a_notebook_whose_name_is_not_utf8_is_copied_updated_and_printed(source, tmp_path, capsys):
    # Finding (issue 43): a folder named in Latin-1 (« caf\xe9 ») failed printing its report, and a notebook so
    # named failed writing the manifest (UnicodeEncodeError) after its copy was made.
    import os

    odd = os.fsdecode(b"02_caf\xe9.ipynb")
    (source / odd).write_text(json.dumps(_nb("print(3)")), encoding="utf-8")
    ws = tmp_path / os.fsdecode(b"atelier-\xe9t\xe9")
    assert workshop.main([str(ws), "--source", str(source)]) == 0
    out = capsys.readouterr().out
    assert "02_caf\\udce9.ipynb  copied" in out and "atelier-\\udce9t\\udce9" in out
    assert (ws / odd).is_file()
    assert workshop.main([str(ws), "--source", str(source)]) == 0  # the manifest read back names it
    assert "02_caf\\udce9.ipynb  unchanged" in capsys.readouterr().out
    (source / odd).write_text(json.dumps(_nb("print(4)")), encoding="utf-8")
    assert workshop.main([str(ws), "--source", str(source)]) == 0
    assert "02_caf\\udce9.ipynb  updated" in capsys.readouterr().out  # untouched by the learner: it follows


def test_a_workspace_that_is_a_file_or_a_manifest_that_is_a_folder_is_refused_before_anything_is_written(
        source, tmp_path, capsys):
    # Probes (issue 43): « workshop: [Errno 17] File exists », and « [Errno 21] Is a directory » after the copy.
    mine = tmp_path / "notes.txt"
    mine.write_text("à moi", encoding="utf-8")
    assert workshop.main([str(mine), "--source", str(source)]) == 1
    assert "is a file, not a folder" in capsys.readouterr().out and mine.read_text(encoding="utf-8") == "à moi"
    ws = tmp_path / "ws"
    (ws / workshop.MANIFEST).mkdir(parents=True)
    for args in ([], ["--reset", "00"]):
        assert workshop.main([str(ws), "--source", str(source), *args]) == 1
        assert "is not a file" in capsys.readouterr().out
        assert sorted(p.name for p in ws.iterdir()) == [workshop.MANIFEST]  # nothing was copied
