#!/usr/bin/env bash
# All set-up on a fresh machine, idempotent: a virtualenv in .venv with the CPU build of torch,
# the package (editable) with its dev extra, a local MathJax for the offline book, and (for
# the browser check) Debian's chromium. GPU users: see README.md ("Installing with CUDA").
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}

# Debian's packages (a browser for the site check, a Chinese font) download while pip works: they are needed only by
# the site check and one figure, and apt and pip fetch from different servers, so the two waits overlap.
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
need_browser=0; need_fonts=0
[ "${SKIP_BROWSER:-0}" != 1 ] && ! command -v chromium >/dev/null 2>&1 && need_browser=1
[ "${SKIP_FONTS:-0}" != 1 ] && ! fc-list 2>/dev/null | grep -qi "WenQuanYi Micro Hei" && need_fonts=1
apt_log=$(mktemp)
apt_pid=""
if [ "$need_browser$need_fonts" != 00 ]; then
  (
    set -e
    $SUDO apt-get update -qq
    if [ "$need_browser" = 1 ]; then
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null || { echo browser; exit 1; }
    fi
    if [ "$need_fonts" = 1 ]; then
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq fonts-wqy-microhei >/dev/null || echo fonts
    fi
  ) > "$apt_log" 2>&1 &
  apt_pid=$!
fi

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

# The Debian packages started above.
if [ -n "$apt_pid" ]; then
  apt_status=0; wait "$apt_pid" || apt_status=$?
  if [ "$apt_status" != 0 ]; then
    cat "$apt_log"; echo "install: apt-get could not install chromium (needed by tools/check_site.py)"; exit 1
  fi
  if grep -qx fonts "$apt_log"; then
    echo "install: could not install fonts-wqy-microhei; chapter 09b's Chinese labels will show boxes"
  elif [ "$need_fonts" = 1 ]; then
    # matplotlib caches its font list: drop the cache so that it finds the new font
    rm -f "${MPLCONFIGDIR:-$HOME/.cache/matplotlib}"/fontlist-*.json
  fi
fi
rm -f "$apt_log"
echo "install: ok ($("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
