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
