#!/usr/bin/env bash
# All set-up on a fresh machine, idempotent: a virtualenv in .venv with the CPU build of torch,
# the package (editable) with its dev extra, a local MathJax for the offline book, and (for
# the browser check) Debian's chromium. GPU users: see README.md ("Installing with CUDA").
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
# torch first: a bare `torch>=2.4` with no torch installed would pull several GB of CUDA wheels.
"$VENV/bin/python" -m pip install -q "$TORCH_SPEC"
"$VENV/bin/python" -m pip install -q -e ".[dev]"

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

# A real browser for the site check (tools/check_site.py).
if [ "${SKIP_BROWSER:-0}" != 1 ] && ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
# A font with Chinese characters, for chapter 09b's attention maps of a Chinese sentence (optional: without it
# matplotlib draws boxes for those labels). matplotlib caches its font list, so drop the cache after installing.
if [ "${SKIP_FONTS:-0}" != 1 ] && ! fc-list 2>/dev/null | grep -qi "WenQuanYi Micro Hei"; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  if ($SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq fonts-wqy-microhei) >/dev/null; then
    rm -f "${MPLCONFIGDIR:-$HOME/.cache/matplotlib}"/fontlist-*.json
  else
    echo "install: could not install fonts-wqy-microhei; chapter 09b's Chinese labels will show boxes"
  fi
fi
echo "install: ok ($("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
