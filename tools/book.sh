#!/usr/bin/env bash
# The main job: install everything, then build the website, both editions, from freshly executed notebooks
# (offline default data). Output: _build/site/index.html (English: _build/site/en/, 中文: _build/site/zh_CN/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install.sh
source .venv/bin/activate
bash tools/build_site.sh
echo "book: open _build/site/index.html"
