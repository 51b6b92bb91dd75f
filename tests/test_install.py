"""``pip install .`` — not editable — into a fresh environment, then used from another folder.

What an installed rungs must find without the repository: the handbook and
CACM (package data), the model file (the machine's cache), its own commands.
The fresh environment gets this environment's dependencies through a ``.pth``
line (nothing is downloaded); ``rungs`` itself is built and installed from the
checkout, so the copy that runs is the installed one, not the source tree.
"""

import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("fresh")
    env_dir = root / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = Path(subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                           text=True).strip())
    # This environment's packages, found through one path line: its .pth files (the editable rungs among
    # them) are not read from there, so the only rungs the fresh environment can import is the one we install.
    (purelib / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources, never in the checkout.
    source = root / "source"
    shutil.copytree(REPO / "rungs", source / "rungs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", source)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(purelib), str(source)], check=True, cwd=root,
                   env={**os.environ, "PIP_NO_CACHE_DIR": "1"})
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(REPO / "tests" / "offline")  # the offline guard only, never the source tree
    return python, elsewhere, env


def run(installed, *args, **kw):
    python, cwd, env = installed
    return subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, **kw)


def test_the_installed_copy_is_the_one_that_runs_and_it_carries_its_data(installed):
    out = run(installed, "-c", "import rungs, rungs.lab.handbook as h, rungs.lab.cacm as c; "
                               "print(rungs.__file__); print(len(h.load_pages()), len(h.load_questions()), "
                               "len(c.load_queries()))")
    assert out.returncode == 0, out.stderr
    where, counts = out.stdout.split("\n")[:2]
    assert str(REPO) not in where and "site-packages" in where
    assert counts == "70 155 64"


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
