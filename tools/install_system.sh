#!/usr/bin/env bash
# The Debian packages of the checks, idempotent: Debian's chromium (the browser of tools/check_site.py) and a Chinese
# font (the CJK labels of chapter 22's figure). `apt-get` needs root or sudo. SKIP_BROWSER=1 / SKIP_FONTS=1 leave
# either out. tools/install.sh runs this alongside pip; tools/test.sh alongside the tests, waiting only before the
# book build, the first step that needs either package.
set -euo pipefail
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
need_browser=0; need_fonts=0
[ "${SKIP_BROWSER:-0}" != 1 ] && ! command -v chromium >/dev/null 2>&1 && need_browser=1
[ "${SKIP_FONTS:-0}" != 1 ] && ! fc-list 2>/dev/null | grep -qi "WenQuanYi Micro Hei" && need_fonts=1
[ "$need_browser$need_fonts" = 00 ] && exit 0
$SUDO apt-get update -qq
if [ "$need_browser" = 1 ]; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null ||
    { echo "install: apt-get could not install chromium (needed by tools/check_site.py)"; exit 1; }
fi
if [ "$need_fonts" = 1 ]; then
  if DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq fonts-wqy-microhei >/dev/null; then
    # matplotlib caches its font list: drop the cache so that it finds the new font
    rm -f "${MPLCONFIGDIR:-$HOME/.cache/matplotlib}"/fontlist-*.json
  else
    echo "install: could not install fonts-wqy-microhei; chapter 22's Chinese labels will show boxes"
  fi
fi
