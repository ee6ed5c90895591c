#!/usr/bin/env bash
# The test command: install everything, then check that
#   1. annotated_transformer/ is exactly what nbdev_export writes from nbs/,
#   2. the notebooks are clean (nbdev_clean changes nothing),
#   3. pytest passes, and its numerical comparisons pass under a second set of CPU kernels as well,
#   4. the Chinese edition's catalogs hold exactly today's English messages, every one translated,
#   5. both editions of the book build with warnings treated as errors, the English one executing every notebook
#      (two at a time; `#| eval: false` cells are skipped, as nbdev_test skips them), and
#   6. the built site renders in headless Chromium (math typeset, figures, no console errors, the attention explorers
#      showing their data when worked by pointer and keyboard; the Chinese pages in a real CJK font, with no markup
#      left over), and
#   7. the wheel alone, without the dev extra, in a clean virtualenv with the requirements a user's install resolves,
#      runs a user's script (tools/wheel_check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's packages (browser, font) are first needed by the book build: they install while the tests run.
mkdir -p _build/logs
bash tools/install_system.sh > _build/logs/install_system.log 2>&1 & system=$!
SKIP_SYSTEM=1 bash tools/install.sh
source .venv/bin/activate
step() { printf '\n=== %s (%ss elapsed)\n' "$1" "$SECONDS"; }

step "nbdev_export leaves no diff"
nbdev_export
git status --porcelain -- annotated_transformer | grep . && { echo "annotated_transformer/ is out of sync with nbs/: run nbdev_export and commit"; git diff --stat -- annotated_transformer; exit 1; } || true

step "notebooks are clean"
nbdev_clean
git status --porcelain -- nbs | grep . && { echo "notebooks are not clean: run nbdev_clean and commit"; exit 1; } || true

# (one core's work: it runs beside pytest, and its log is printed when pytest is done)
step "the Chinese catalogs hold exactly today's English messages, all translated (started)"
python tools/book_i18n.py check > _build/logs/i18n_check.log 2>&1 & i18n=$!

# (mostly downloads and unpacking: it runs beside pytest, and its log is printed when pytest is done)
step "the wheel alone, as a user installs it (started)"
bash tools/wheel_check.sh > _build/logs/wheel_check.log 2>&1 & wheel=$!

step "pytest"
# (a test whose checks chapter 29 repeats as the book builds below is left to the book)
# (--dist worksteal: an idle worker takes tests queued for the other, so that tests handed out in advance to a busy
#  worker do not leave the other core idle for minutes; --durations: the slowest tests in the log, for whoever cuts next)
ANNOTATED_TRANSFORMER_BOOK_BUILD_FOLLOWS=1 python -m pytest -q -n 2 --dist worksteal --durations=15 tests

step "the Chinese catalogs (started before pytest)"
i18n_status=0; wait "$i18n" || i18n_status=$?
cat _build/logs/i18n_check.log
[ "$i18n_status" = 0 ] || exit 1

# PyTorch picks its CPU kernels by instruction set (AVX-512, AVX2, or the portable default), and they round
# differently. A tolerance that holds only for this machine's kernels would fail on a reader's machine, so the
# tests that compare numbers run once more under the portable kernels.
step "the wheel alone (started before pytest)"
wheel_status=0; wait "$wheel" || wheel_status=$?
cat _build/logs/wheel_check.log
[ "$wheel_status" = 0 ] || exit 1

step "numerical tests under ATEN_CPU_CAPABILITY=default"
ATEN_CPU_CAPABILITY=default python -m pytest -q -n 2 --dist worksteal tests/test_attention.py tests/test_masking.py \
    tests/test_multihead.py tests/test_positional.py tests/test_sublayers.py tests/test_model.py \
    tests/test_torch_compare.py tests/test_decoding.py tests/test_learning.py -k "not tiny_model_learns"

step "Debian's packages (started with the install)"
system_status=0; wait "$system" || system_status=$?
cat _build/logs/install_system.log
[ "$system_status" = 0 ] || exit 1
rm -f "${MPLCONFIGDIR:-$HOME/.cache/matplotlib}"/fontlist-*.json  # a font list read while the font was installing

step "jupyter-book build -W, both editions (the English one executes every notebook)"
bash tools/build_site.sh

step "the site in headless Chromium, both editions (side by side: one browser per core)"
# SCREENSHOT_DIR=DIR keeps a PNG of every page view (for a person to look at; the checks do not need them)
python tools/check_site.py _build/site/en ${SCREENSHOT_DIR:+--screenshots "$SCREENSHOT_DIR"} \
  > _build/logs/site_en.log 2>&1 & en=$!
python tools/check_site.py _build/site/zh_CN --language zh_CN ${SCREENSHOT_DIR:+--screenshots "$SCREENSHOT_DIR/zh_CN"} \
  > _build/logs/site_zh_CN.log 2>&1 & zh=$!
en_status=0; wait "$en" || en_status=$?
zh_status=0; wait "$zh" || zh_status=$?
cat _build/logs/site_en.log _build/logs/site_zh_CN.log
[ "$en_status" = 0 ] && [ "$zh_status" = 0 ] || { echo "site check failed (en: $en_status, zh_CN: $zh_status)"; exit 1; }

step "all checks passed"
