#!/usr/bin/env bash
# What a user gets: the package's wheel, without the dev extra, in a clean virtualenv whose requirements are resolved
# as a user's install resolves them (their newest releases within settings.ini's ranges, not the dev extra's pins),
# running a user's script (tests/fixtures/api_user.py: the documented API, a tiny copy-task model trained for two
# updates) outside this checkout, so that nothing but the wheel can be imported. Prints the versions it got.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
unset PYTHONPATH  # nothing but the wheel: not this checkout, which a developer's shell may put on the path
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.venv/bin/python -m pip wheel -q --no-deps --no-build-isolation -w "$work/dist" . >/dev/null
python3 -m venv "$work/venv"
# The same installer and options as tools/install.sh (tools/uv_options.sh: the wheel folders and constraints that pip
# is given), so that torch is the build the dev install has (the CPU one, as README.md installs it), not PyPI's CUDA one.
source tools/uv_options.sh
if [ -x .venv/bin/uv ]; then
  uv_options "$work/venv/bin/python"
  install() {
    .venv/bin/uv pip install -q --compile-bytecode --python "$work/venv/bin/python" "${UV_OPTIONS[@]}" "$@"
  }
else
  install() { "$work/venv/bin/python" -m pip install -q "$@"; }
fi
install "$TORCH_SPEC"  # first: the wheel's bare torch>=2.13 would pull the newest
install "$work"/dist/*.whl
cd "$work"
"$work/venv/bin/python" - <<'PY'
import importlib.metadata as m
import sys
import annotated_transformer
if not annotated_transformer.__file__.startswith(sys.prefix):
    raise SystemExit(f"wheel check: imported {annotated_transformer.__file__}, not the wheel installed in {sys.prefix}")
print("wheel check:", "annotated-transformer", annotated_transformer.__version__, "from", annotated_transformer.__file__)
print("  with", ", ".join(f"{d} {m.version(d)}" for d in ("torch", "fastcore", "numpy", "sacrebleu", "sentencepiece",
                                                           "safetensors", "tqdm")))
try:
    m.version("matplotlib")
    raise SystemExit("matplotlib is installed without the book extra: a requirement pulls it in")
except m.PackageNotFoundError:
    pass
PY
dev_torch=$("$root/.venv/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))')
user_torch=$("$work/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))')
if [ "$user_torch" != "$dev_torch" ]; then
  echo "wheel check: installed torch $user_torch, where tools/install.sh installed $dev_torch" >&2
  exit 1
fi
"$work/venv/bin/python" "$root/tests/fixtures/api_user.py"
echo "wheel check: the user's script ran on the wheel alone"
