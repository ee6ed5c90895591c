"""The package's type stubs (`annotated_transformer/*.pyi`): current, shipped, and what a type checker reads.

The chapters add methods to their classes in later cells (fastcore's `@patch`); the stubs, written by
tools/make_stubs.py from the imported package, show those methods to type checkers and IDEs. mypy checks
tests/fixtures/api_user.py, a user's script calling them: without the stubs it reports 13 "has no attribute" errors
(`Trainer.fit`, `Translator.translate`, `Tokenizer.encode`, ...), with them none.
"""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PITFALL, subprocess_env

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "annotated_transformer"
REGENERATE = "python tools/make_stubs.py"


def make_stubs():
    spec = importlib.util.spec_from_file_location("make_stubs", REPO / "tools" / "make_stubs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(bool(PITFALL), reason="a planted pitfall changes the objects the stubs are written from")
def test_stubs_and_api_pages_are_current():
    "The committed stubs and API pages are what the generator writes from the package as exported now."
    wanted = make_stubs().written()
    present = set(PKG.glob("*.pyi")) | set((REPO / "api").glob("*.md")) | {REPO / "_toc.yml"}
    missing = sorted(str(p.relative_to(REPO)) for p in set(wanted) - present)
    extra = sorted(str(p.relative_to(REPO)) for p in present - set(wanted))
    stale = sorted(str(p.relative_to(REPO)) for p in set(wanted) & present
                   if p.read_text(encoding="utf-8") != wanted[p])
    assert not (missing or extra or stale), (
        f"type stubs or API pages out of date (missing: {missing}, stale: {stale}, left over: {extra}); "
        f"regenerate them with `{REGENERATE}` (after nbdev_export) and commit annotated_transformer/*.pyi, "
        "api/*.md and _toc.yml")


def test_every_module_has_a_stub_and_the_stubs_ship():
    modules = {p.stem for p in PKG.glob("*.py") if p.stem != "_modidx"}
    assert modules == {p.stem for p in PKG.glob("*.pyi")}, f"regenerate with `{REGENERATE}`"
    setup = (REPO / "setup.py").read_text(encoding="utf-8")
    assert re.search(r'"py\.typed",\s*"\*\.pyi"', setup), "setup.py's package_data must ship *.pyi next to py.typed"


def test_patched_methods_are_in_the_stubs():
    text = {n: (PKG / f"{n}.pyi").read_text(encoding="utf-8") for n in ("trainer", "translate", "multihead")}
    assert re.search(r"class Trainer\b[\s\S]*?\n    def fit\(self, steps: int \| None = None", text["trainer"])
    assert re.search(r"class Translator\b[\s\S]*?\n    def translate\(self, sentences: Sequence\[str\]",
                     text["translate"])
    forward = re.search(r"\n    def forward\(self, query: Tensor.*\n((?:        .*\n)+)", text["multihead"])
    assert forward and "- query: (batch, n_queries, d_model)" in forward.group(1), "docments missing in the stub"


MYPY_INI = """\
[mypy]
follow_imports = silent
ignore_missing_imports = True
# torch's own sources take mypy minutes to analyse: read as Any, which also makes every attribute of an nn.Module
# subclass acceptable, so the control file below checks that those classes' methods come from the stubs
[mypy-torch.*,numpy.*,matplotlib.*,sacrebleu.*,tqdm.*,sentencepiece.*,fastcore.*,safetensors.*]
follow_imports = skip
"""

CONTROL = """\
from annotated_transformer import MultiHeadAttention, Trainer, Translator
def control(trainer: Trainer, mha: MultiHeadAttention, translator: Translator) -> None:
    trainer.no_such_method()
    reveal_type(MultiHeadAttention.forward)
    translator.translate(3)
"""


def test_mypy_sees_the_patched_methods(tmp_path):
    "mypy on a user's script: no error; on a control file: exactly the errors it should find."
    pytest.importorskip("mypy")
    (tmp_path / "mypy.ini").write_text(MYPY_INI, encoding="utf-8")
    (tmp_path / "control.py").write_text(CONTROL, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini"), "--cache-dir",
         str(tmp_path / "cache"), "--no-color-output", "--show-error-codes",
         str(REPO / "tests" / "fixtures" / "api_user.py"), str(tmp_path / "control.py")],
        cwd=tmp_path, capture_output=True, text=True, env=subprocess_env(), timeout=600)
    out = result.stdout + result.stderr
    user = [line for line in out.splitlines() if "api_user.py" in line]
    assert not user, "mypy on tests/fixtures/api_user.py:\n" + "\n".join(user)
    assert '"Trainer" has no attribute "no_such_method"' in out, out  # the stubs are read and checked
    assert re.search(r'Revealed type is "def \(self: annotated_transformer\.multihead\.MultiHeadAttention, '
                     r'query: Any, key: Any, value: Any, mask: Any \| None =', out), out
    assert re.search(r'Argument 1 to "translate" of "Translator" has incompatible type "int"; '
                     r'expected "Sequence\[str\]"', out), out
    assert out.count("error:") == 2, out
