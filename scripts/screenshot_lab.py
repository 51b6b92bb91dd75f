"""JupyterLab as a learner first opens it, checked once in a real headless browser.

Starts ``jupyter lab`` the way ``bash run.sh lab`` does (the collection's
environment, the ``notebooks/`` folder) on a free port with a token, and a
fresh user-settings folder (a learner who never answered anything), opens it
in Debian's Chromium through Playwright, waits for the file browser, checks
that no notification toast is up (the « Would you like to get notified about
official Jupyter news? » prompt is one), saves ``docs/lab.png``, stops the
server. Exit status 0 when the check passes.

    .venv/bin/python scripts/screenshot_lab.py [--out docs/lab.png] [--chromium /usr/bin/chromium]

Needs: ``bash run.sh lab`` run once (the venv and its JupyterLab settings),
Debian's chromium (``apt-get install -y chromium``), and the ``playwright``
Python package (only its API: the browser is the system's).
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]
NEWS = "official Jupyter news"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(url: str, server: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"jupyter lab exited with status {server.returncode} before it answered")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"jupyter lab did not answer on {url} within {seconds:.0f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "lab.png")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--settle", type=float, default=8.0,
                        help="seconds to wait after the file browser shows, for a late toast to appear")
    parser.add_argument("--lab-arg", action="append", default=[],
                        help="one more option for jupyter lab (repeatable), e.g. --lab-arg=--LabApp.news_url=None")
    args = parser.parse_args(argv)
    if not Path(args.chromium).exists():
        print(f"no browser at {args.chromium}: apt-get install -y chromium")
        return 2
    from playwright.sync_api import sync_playwright

    port, token = free_port(), secrets.token_hex(16)
    jupyter = Path(sys.executable).with_name("jupyter")
    with tempfile.TemporaryDirectory(prefix="rungs-lab-") as scratch:
        env = dict(os.environ,
                   # A learner who never opened JupyterLab: no saved answers, no saved layout.
                   JUPYTERLAB_SETTINGS_DIR=str(Path(scratch) / "settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(Path(scratch) / "workspaces"),
                   HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        server = subprocess.Popen(
            [str(jupyter), "lab", "notebooks/", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
             f"--IdentityProvider.token={token}", *(["--allow-root"] if os.geteuid() == 0 else []),
             *args.lab_arg],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=open(Path(scratch) / "server.log", "w"))
        try:
            wait_for_server(f"http://127.0.0.1:{port}/api/status?token={token}", server)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(f"http://127.0.0.1:{port}/lab?token={token}")
                page.wait_for_selector(".jp-DirListing-item", timeout=90_000)
                listed = page.locator(".jp-DirListing-itemName").all_inner_texts()
                page.wait_for_timeout(args.settle * 1000)
                toasts = page.locator(".Toastify__toast").all_inner_texts()
                news = NEWS in page.content()
                args.out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(args.out))
                browser.close()
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    notebooks = [name for name in listed if name.endswith(".ipynb")]
    print(f"file browser: {len(notebooks)} notebooks ({', '.join(notebooks[:3])}…)")
    print(f"notification toasts: {len(toasts)}" + (f" — {' | '.join(' '.join(t.split()) for t in toasts)}" if toasts else ""))
    print(f"news prompt: {'SHOWN' if news else 'absent'}")
    print(f"screenshot: {args.out}")
    return 0 if notebooks and not toasts and not news else 1


if __name__ == "__main__":
    sys.exit(main())
