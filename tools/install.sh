#!/usr/bin/env bash
# All set-up on a fresh machine, idempotent: a virtualenv in .venv with the CPU build of torch,
# the package (editable) with its dev extra, a local MathJax for the offline book, and (for
# the browser check) Debian's chromium. GPU users: see README.md ("Installing with CUDA").
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}

# Debian's packages (a browser for the site check, a Chinese font) download while pip works: apt and pip fetch from
# different servers, so the two waits overlap. SKIP_SYSTEM=1: not at all (tools/test.sh starts them itself).
system_log=$(mktemp)
system_pid=""
if [ "${SKIP_SYSTEM:-0}" != 1 ]; then
  bash tools/install_system.sh > "$system_log" 2>&1 &
  system_pid=$!
fi

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip

# The packages go in with uv (from PyPI), which installs the same requirements as pip in parallel: on a 2-core machine
# with empty caches, torch and the dev extra took 7 + 27 s with uv against 55 + 125 s with pip. uv does not read pip's
# configuration, so the wheel folders and constraints that pip is given (environment or pip.conf) are passed on
# (tools/uv_options.sh, which tools/wheel_check.sh uses too).
# pip stays the fallback (if uv cannot be installed or fails) and the way by hand (README.md); INSTALLER=pip forces it.
# --compile-bytecode: pip writes every module's .pyc at install, uv by default does not; where Python may not write
# them later (PYTHONDONTWRITEBYTECODE, as on this project's CI machines) every process then compiled torch from source:
# `import torch` took 16.9 s instead of 3.5 s, and CI (hundreds of processes and kernels) ran 2064 s instead of ~1600.
source tools/uv_options.sh
install_packages() {
  if [ "${INSTALLER:-uv}" = uv ] && "$VENV/bin/python" -m pip install -q uv >/dev/null 2>&1; then
    uv_options "$VENV/bin/python"
    "$VENV/bin/uv" pip install -q --compile-bytecode --python "$VENV/bin/python" "${UV_OPTIONS[@]}" "$@" && return
    echo "install: uv could not install $*; trying pip"
  fi
  "$VENV/bin/python" -m pip install -q "$@"
}
# torch first: a bare `torch>=2.4` with no torch installed would pull several GB of CUDA wheels.
install_packages "$TORCH_SPEC"
install_packages -e ".[dev]"

# Kernels started from this virtualenv read .venv/etc/ipython/: drop ipykernel's once-per-notebook TCP notice there.
mkdir -p "$VENV/etc/ipython"
cp tools/ipython_kernel_config.py "$VENV/etc/ipython/ipython_kernel_config.py"

# MathJax 3 from the npm registry, served from _static/ so math renders without a CDN.
if [ ! -f _mathjax/tex-svg.js ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm install --silent --no-audit --no-fund mathjax@3 >/dev/null)
  mkdir -p _mathjax
  cp "$tmp/node_modules/mathjax/es5/tex-svg.js" _mathjax/tex-svg.js
  rm -rf "$tmp"
fi

# The Debian packages started above.
if [ -n "$system_pid" ]; then
  system_status=0; wait "$system_pid" || system_status=$?
  cat "$system_log"
  [ "$system_status" = 0 ] || exit 1
fi
rm -f "$system_log"
echo "install: ok ($("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
