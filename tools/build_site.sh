#!/usr/bin/env bash
# Both editions of the book into one site, each with warnings as errors:
#   English: every notebook executed as the book is built (what the website shows is what the code does today),
#   two at a time (tools/jb_build.py: jupyter-book with parallel reading; this is the tests' run of every notebook);
#   中文 (zh_CN): the same notebooks and their committed outputs, execution off, the prose from the catalogs in
#   locales/zh_CN/LC_MESSAGES/ (tools/book_i18n.py).
# Output: _build/site/en/, _build/site/zh_CN/ and _build/site/index.html, which picks one.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf _build/html _build/.doctrees _build/zh_CN
mkdir -p _build/logs
start=$SECONDS
# The Chinese edition executes nothing, so it builds alongside the English one, on the CPU time that the English
# edition's kernels leave (its log is printed when both are done).
python tools/book_i18n.py config zh_CN _build/_config.zh_CN.yml >/dev/null
python tools/jb_build.py build . --config _build/_config.zh_CN.yml --path-output _build/zh_CN -W -n --keep-going \
  > _build/logs/build_zh_CN.log 2>&1 &
zh=$!
# Two notebooks execute at once, one per core: each kernel computes on one thread (OMP_NUM_THREADS=1), since two
# kernels each running two OpenMP threads on two cores spin against each other (the tests run the same way).
# Each figure the kernels show is kept in _build/figures/ (tools/ipython_kernel_config.py), and drawn again with
# Chinese labels for the Chinese edition (tools/figure_i18n.py, run by `book_i18n.py site` below).
rm -rf _build/figures
# (its log is kept too: when a build fails, what went wrong is printed again at the very end, where a reader of a
#  long CI log looks first)
set +e
BOOK_FIGURES_DIR="$PWD/_build/figures" BOOK_FIGURES_HOOK="$PWD/tools/figure_i18n.py" \
  OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} python tools/jb_build.py build . -W -n --keep-going 2>&1 \
  | tee _build/logs/build_en.log
en_status=${PIPESTATUS[0]}
set -e
echo "English edition built in $((SECONDS - start)) s (status $en_status)"
zh_status=0; wait "$zh" || zh_status=$?
cat _build/logs/build_zh_CN.log
echo "Chinese edition built alongside, done after $((SECONDS - start)) s (status $zh_status)"
if [ "$en_status" != 0 ] || [ "$zh_status" != 0 ]; then
  for edition in en zh_CN; do
    echo "--- what went wrong in the $edition build (_build/logs/build_$edition.log: warnings, errors, tracebacks)"
    grep -n -E "WARNING|ERROR|Error|Traceback|Exception|failed" "_build/logs/build_$edition.log" | grep -v "copying images" | tail -40 || true
  done
  for report in _build/html/reports/*.err.log _build/html/reports/*/*.err.log; do  # a notebook that failed
    [ -f "$report" ] && { echo "--- $report"; tail -40 "$report"; }
  done
  echo "build failed (en: $en_status, zh_CN: $zh_status)"; exit 1
fi
python tools/book_i18n.py site
