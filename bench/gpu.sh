#!/usr/bin/env bash
# The device machine's entry point for bench/gpu.py (bench/README.md, "GPU run — bench/gpu.sh"):
#     bash bench/gpu.sh --out "$OUT" [more bench/gpu.py options]
# That machine's python3 has torch, numpy, sentencepiece, sacrebleu, safetensors and tqdm but not fastcore, and the
# package is not installed there (it asks for a newer torch): the package runs from this checkout (PYTHONPATH), and
# fastcore comes from the wheels that tools/gpu_wheels.sh put in .whl/ here (carried with the call: carry [".whl"]).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if ! "$PY" -c "import fastcore" 2>/dev/null; then
  if ! ls .whl/*.whl >/dev/null 2>&1; then
    echo "gpu.sh: fastcore is missing and .whl/ holds no wheels: run 'bash tools/gpu_wheels.sh' first and carry .whl" >&2
    exit 2
  fi
  site=${GPU_SITE:-/tmp/gpu_site}
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .whl/*.whl \
    || { echo "gpu.sh: could not install .whl/*.whl" >&2; exit 2; }
  export PYTHONPATH="$PYTHONPATH:$site"
fi
exec "$PY" bench/gpu.py "$@"
