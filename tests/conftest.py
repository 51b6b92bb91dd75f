import os
import sys
from pathlib import Path

# The suite is offline by construction; a library that tries a hub must fail fast, not hang.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# And that is checked, not assumed: every non-loopback connection is refused, here (the unit tests) and in
# every process the suite starts (nbval's kernels, servers) through tests/offline/sitecustomize.py.
# RUNGS_SOCKET_GUARD=0 turns it off for a run that must reach a host; RUNGS_SOCKET_ALLOW=host lets one through.
OFFLINE = Path(__file__).resolve().parent / "offline"
if os.environ.get("RUNGS_SOCKET_GUARD", "1") != "0":
    sys.path.insert(0, str(OFFLINE))
    import netguard

    netguard.install()
    os.environ["RUNGS_SOCKET_GUARD"] = "1"
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if str(OFFLINE) not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(OFFLINE), *filter(None, paths)])


import pytest  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="session")
def nothing_written_in_the_checkout(tmp_path_factory):
    """The suite runs from a scratch folder, and leaves the checkout as it found it.

    A function given a generated path (``write_questions("èõ99…")``) writes where the process stands: the
    scratch folder, never the repository's top. And the top is listed before and after: a test that wrote
    there anyway fails the session, naming what it left.
    """
    before = set(os.listdir(REPO))
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(here)
    left = sorted(set(os.listdir(REPO)) - before - {".pytest_cache", ".hypothesis"})
    assert not left, f"the suite wrote into the checkout's top: {left}"
