#!/usr/bin/env bash
# What a user gets: the package's wheel, without the dev extra, in a clean virtualenv whose requirements are resolved
# as a user's install resolves them (their newest releases within settings.ini's ranges, not the dev extra's pins),
# running a user's script (tests/fixtures/api_user.py: the documented API, a tiny copy-task model trained for two
# updates) outside this checkout, so that nothing but the wheel can be imported. Prints the versions it got.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.venv/bin/python -m pip wheel -q --no-deps --no-build-isolation -w "$work/dist" . >/dev/null
python3 -m venv "$work/venv"
if [ -x .venv/bin/uv ]; then
  install() { .venv/bin/uv pip install -q --compile-bytecode --python "$work/venv/bin/python" "$@"; }
else
  install() { "$work/venv/bin/python" -m pip install -q "$@"; }
fi
install "$TORCH_SPEC"  # the CPU build, as README.md installs it (a bare requirement would pull CUDA wheels)
install "$work"/dist/*.whl
cd "$work"
"$work/venv/bin/python" - <<'PY'
import importlib.metadata as m
import annotated_transformer
print("wheel check:", "annotated-transformer", annotated_transformer.__version__, "from", annotated_transformer.__file__)
print("  with", ", ".join(f"{d} {m.version(d)}" for d in ("torch", "fastcore", "numpy", "sacrebleu", "sentencepiece",
                                                           "safetensors", "tqdm")))
try:
    m.version("matplotlib")
    raise SystemExit("matplotlib is installed without the book extra: a requirement pulls it in")
except m.PackageNotFoundError:
    pass
PY
"$work/venv/bin/python" "$root/tests/fixtures/api_user.py"
echo "wheel check: the user's script ran on the wheel alone"
