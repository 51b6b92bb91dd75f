# Put on PYTHONPATH by the suite only (run.sh test, tests/conftest.py): every Python process the suite
# starts, nbval's kernels included, refuses non-loopback connections when RUNGS_SOCKET_GUARD=1.
# See netguard.py beside this file.
import os

if os.environ.get("RUNGS_SOCKET_GUARD") == "1":
    import netguard

    netguard.install()
