"""``pip install .`` — not editable — into a fresh environment, then used from another folder.

What an installed rungs must find without the repository: the handbook and
CACM (package data), the model file (the machine's cache), its own commands.
The fresh environment gets this environment's dependencies through a ``.pth``
line (nothing is downloaded); ``rungs`` itself is built and installed from a
copy of the checkout laid out as the checkout is — ``handbook/`` at the top and
``rungs/lab/data/handbook`` the link to it, the one source of truth — so the
package data are proved to travel through that link, into an install and into
a wheel, and the copy that runs is the installed one, not the source tree.
"""

import json
import os
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HANDBOOK = REPO / "handbook"  # what a reader browses; the package's data/handbook is a link to it
PIP = [sys.executable, "-m", "pip"]
QUIET = ["--quiet", "--no-deps", "--no-build-isolation", "--no-index"]


def handbook_counts() -> tuple[int, int]:
    """The checkout's pages and questions, counted from the files (questions are added now and then)."""
    lines = (HANDBOOK / "questions.jsonl").read_text(encoding="utf-8").split("\n")
    return len(list((HANDBOOK / "pages").glob("*.md"))), sum(1 for line in lines if line.strip())


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """The checkout's package, copied as it is laid out: links kept as links, ``handbook/`` beside ``rungs/``.

    Built from a copy: setuptools writes build/ and *.egg-info beside the sources, never in the checkout.
    """
    root = tmp_path_factory.mktemp("source")
    shutil.copytree(REPO / "rungs", root / "rungs", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(HANDBOOK, root / "handbook")
    shutil.copy(REPO / "pyproject.toml", root)
    return root


@pytest.fixture(scope="module")
def installed(tmp_path_factory, source):
    root = tmp_path_factory.mktemp("fresh")
    env_dir = root / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = Path(subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                           text=True).strip())
    # This environment's packages, found through one path line: its .pth files (the editable rungs among
    # them) are not read from there, so the only rungs the fresh environment can import is the one we install.
    (purelib / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([*PIP, "install", *QUIET, "--target", str(purelib), str(source)], check=True, cwd=root,
                   env={**os.environ, "PIP_NO_CACHE_DIR": "1"})
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(REPO / "tests" / "offline")  # the offline guard only, never the source tree
    return python, elsewhere, env, purelib


def run(installed, *args, **kw):
    python, cwd, env, _ = installed
    return subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, **kw)


def test_the_installed_copy_is_the_one_that_runs_and_it_carries_its_data(installed):
    out = run(installed, "-c", "import json, rungs, rungs.lab.handbook as h, rungs.lab.cacm as c; "
                               "print(json.dumps([rungs.__file__, str(h.HANDBOOK), len(h.load_pages()), "
                               "len(h.load_questions()), len(c.load_queries())]))")
    assert out.returncode == 0, out.stderr
    where, handbook, pages, questions, queries = json.loads(out.stdout.splitlines()[0])
    purelib = installed[3].resolve()
    assert str(REPO) not in where and Path(where).resolve().is_relative_to(purelib)
    # The handbook it read is a real folder of the install, not a link back into the checkout.
    assert Path(handbook).resolve().is_relative_to(purelib) and not Path(handbook).is_symlink(), handbook
    assert (pages, questions, queries) == (*handbook_counts(), 64)


def test_the_installed_handbook_is_the_checkouts_file_for_file(installed):
    # Every file a reader browses in handbook/ (pages, questions, README, key figures) is in the install, the same bytes.
    installed_handbook = installed[3] / "rungs" / "lab" / "data" / "handbook"
    wanted = sorted(p.relative_to(HANDBOOK).as_posix() for p in HANDBOOK.rglob("*") if p.is_file())
    assert {"README.md", "questions.jsonl", "key_figures.json"} <= set(wanted)
    got = sorted(p.relative_to(installed_handbook).as_posix() for p in installed_handbook.rglob("*") if p.is_file())
    assert got == wanted
    assert all((installed_handbook / rel).read_bytes() == (HANDBOOK / rel).read_bytes() for rel in wanted)


def test_a_wheel_carries_the_handbook_through_the_link(source, tmp_path):
    subprocess.run([*PIP, "wheel", *QUIET, "--wheel-dir", str(tmp_path), str(source)], check=True, cwd=tmp_path,
                   env={**os.environ, "PIP_NO_CACHE_DIR": "1"})
    wheel, = tmp_path.glob("rungs-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    inside = "rungs/lab/data/handbook/"
    pages = {n for n in names if n.startswith(inside + "pages/") and n.endswith(".md")}
    assert len(pages) == handbook_counts()[0], sorted(pages)[:5]
    assert {inside + f for f in ("README.md", "questions.jsonl", "key_figures.json")} <= names
    assert any(n.startswith("rungs/lab/data/cacm/") for n in names)
    questions = zipfile.ZipFile(wheel).read(inside + "questions.jsonl")
    assert questions == (HANDBOOK / "questions.jsonl").read_bytes()


def test_index_and_search_a_folder_from_another_folder(installed, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "badge.md").write_text("# Badge perdu\n\nUn badge perdu se signale à l'accueil.\n", encoding="utf-8")
    (folder / "œuvres.txt").write_text("Les œuvres sociales\nLe comité gère les œuvres sociales.\n", encoding="utf-8")
    index = tmp_path / "index.sqlite"
    out = run(installed, "-m", "rungs", "index", str(folder), "--index", str(index), "--no-vectors")
    assert out.returncode == 0 and "2 documents" in out.stdout, out.stdout + out.stderr
    for rung in ("fts", "bm25"):
        out = run(installed, "-m", "rungs", "search", "œuvres", "--rung", rung, "--index", str(index))
        assert out.returncode == 0 and "œuvres.txt" in out.stdout, out.stdout + out.stderr


def test_a_command_that_needs_the_repository_says_so(installed, tmp_path):
    out = run(installed, "-m", "rungs", "workshop", str(tmp_path / "ws"))
    assert out.returncode == 1 and "clone of the repository" in out.stdout + out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.model
def test_the_doctor_of_an_installed_rungs(installed):
    out = run(installed, "-m", "rungs", "doctor")
    assert "Traceback" not in out.stderr, out.stderr
    for check in ("python", "model", "encoder", "completion"):
        assert any(line.startswith("✓") and check in line for line in out.stdout.splitlines()), out.stdout
