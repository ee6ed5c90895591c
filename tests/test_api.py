"""The package as an engineer imports it: `__all__` is its public interface, every exception it raises is importable
from the top, it ships its type hints (PEP 561's `py.typed`), and its version is the one settings.ini releases."""
import ast
import configparser
import importlib
import importlib.metadata
import inspect
import pkgutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import annotated_transformer

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "annotated_transformer"


def submodules() -> list:
    return [importlib.import_module(f"annotated_transformer.{m.name}")
            for m in pkgutil.iter_modules(annotated_transformer.__path__) if not m.name.startswith("_")]


def test_every_name_in_all_exists_once():
    names = annotated_transformer.__all__
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    missing = [n for n in names if not hasattr(annotated_transformer, n)]
    assert not missing, missing


def test_all_lists_every_name_the_package_imports():
    "Each name that __init__.py imports is public, and so listed (a name imported but not listed would be a slip)."
    tree = ast.parse((PKG / "__init__.py").read_text(encoding="utf-8"))
    imported = {a.asname or a.name for node in tree.body if isinstance(node, ast.ImportFrom) for a in node.names}
    assert imported == set(annotated_transformer.__all__), (
        f"imported, not listed: {sorted(imported - set(annotated_transformer.__all__))}; "
        f"listed, not imported: {sorted(set(annotated_transformer.__all__) - imported)}")


def test_star_import_gives_exactly_all():
    namespace = {}
    exec("from annotated_transformer import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(annotated_transformer.__all__)


def test_attention_is_the_module_and_computes_attention():
    """`import annotated_transformer.attention as A` gives chapter 02's module; `from annotated_transformer import
    attention` gives the same module, callable as its function: same arguments, same results, same signature."""
    import torch
    import annotated_transformer.attention as A
    from annotated_transformer import attention
    from annotated_transformer.attention import attention as function
    assert inspect.ismodule(A) and A is attention and callable(A.fused_attention) and inspect.isfunction(function)
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 2, 5, 4).unbind(0)
    mask = torch.rand(2, 5, 5) > 0.3
    for got, want in zip(attention(q, k, v, mask=mask), function(q, k, v, mask)):
        assert torch.equal(got, want)
    assert inspect.signature(attention) == inspect.signature(function)
    with pytest.raises(TypeError):
        attention(q, k)  # the function's own error for a missing argument


def test_every_exception_of_a_submodule_is_exported():
    "A user catches what the package raises: each exception class a submodule lists in its __all__ is at the top."
    exceptions = {name: obj for module in submodules() for name in getattr(module, "__all__", [])
                  if inspect.isclass(obj := getattr(module, name)) and issubclass(obj, BaseException)
                  and obj.__module__ == module.__name__}
    assert {"RunWriteError", "StepOutOfMemory", "RunLocked", "Stopped"} <= set(exceptions)
    missing = [name for name, obj in exceptions.items() if getattr(annotated_transformer, name, None) is not obj]
    assert not missing, f"exceptions not exported by annotated_transformer: {missing}"
    assert set(exceptions) <= set(annotated_transformer.__all__)


def test_the_names_users_need_are_exported():
    for name in ["StepOutOfMemory", "init_distributed", "unwrap", "init_weights", "transformer_parameter_count",
                 "RotaryPositions", "RunWriteError", "check_2d_mask", "harvard_to_ours", "HarvardLayerNorm"]:
        assert name in annotated_transformer.__all__, name


def test_exported_names_are_the_submodules_objects():
    "What the top offers is the object a submodule defines (no stale copies); every one is in some module's __all__."
    listed = {}  # name -> the objects of that name in the submodules' __all__ (chapter 01 reuses the names)
    for module in submodules():
        for name in getattr(module, "__all__", []):
            listed.setdefault(name, []).append(getattr(module, name))
    unlisted = [n for n in annotated_transformer.__all__ if n not in listed]
    assert not unlisted, f"in no submodule's __all__: {unlisted}"
    stale = [n for n in annotated_transformer.__all__ if n != "attention"  # the module, callable as the function
             if not any(getattr(annotated_transformer, n) is obj for obj in listed[n])]
    assert not stale, stale


def test_py_typed_is_there_and_declared():
    assert (PKG / "py.typed").is_file() and (PKG / "py.typed").read_bytes() == b""
    # with the stubs, and the attention explorer's script and style (annotated_transformer/explorer.py reads them)
    assert '["py.typed", "*.pyi", "explorer.js", "explorer.css"]' in (REPO / "setup.py").read_text(encoding="utf-8")


def test_version_is_the_released_one():
    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(REPO / "settings.ini", encoding="utf-8")
    version = cfg["DEFAULT"]["version"]
    assert annotated_transformer.__version__ == version
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{version}] - " in changelog, f"CHANGELOG.md has no section for {version}"


def test_a_wheel_ships_py_typed_and_the_version(tmp_path):
    "An installed (not editable) package is typed only if setup.py ships py.typed: build a wheel and look inside."
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("annotated_transformer-*.whl")
    assert wheel.name.startswith(f"annotated_transformer-{annotated_transformer.__version__}-")
    names = zipfile.ZipFile(wheel).namelist()
    assert "annotated_transformer/py.typed" in names
    assert {"annotated_transformer/__init__.pyi", "annotated_transformer/trainer.pyi"} <= set(names)  # tests/test_stubs.py
    # the console script starts from the launcher, which the wheel ships beside the package
    assert "annotated_transformer_launcher.py" in names
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "annotated-transformer = annotated_transformer_launcher:main" in text, text


def test_the_version_is_answered_without_importing_the_package():
    "`annotated-transformer --version` reads the installation's metadata: neither the package nor torch is imported."
    script = ("import sys, annotated_transformer_launcher as L\n"
              "assert L.main(['--version']) == 0\n"
              "assert not [m for m in sys.modules if m.split('.')[0] in ('torch', 'annotated_transformer')]")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"annotated-transformer {importlib.metadata.version('annotated-transformer')}\n"


def test_the_launcher_hands_every_other_command_to_the_cli(capsys):
    import annotated_transformer_launcher as launcher
    from annotated_transformer.cli import USAGE
    assert launcher.main(["--help"]) == 0 and capsys.readouterr().out.strip() == USAGE.strip()
    assert launcher.main(["no-such-command"]) == 2 and "unknown command 'no-such-command'" in capsys.readouterr().err


OLD_PATHS = [(old, new, name) for old, (new, names) in annotated_transformer._MOVED.items() for name in names]


@pytest.mark.parametrize("old,new,name", OLD_PATHS, ids=[f"{o}.{n}" for o, _, n in OLD_PATHS])
def test_a_moved_name_is_read_from_its_old_module_with_a_warning(old, new, name):
    "0.2.0's import paths of names that moved to a later chapter's module work until 0.4.0, and say where to go."
    old_module = importlib.import_module(f"annotated_transformer.{old}")
    new_module = importlib.import_module(f"annotated_transformer.{new}")
    assert name not in vars(old_module), f"{name} is still defined in {old}: it did not move"
    with pytest.warns(DeprecationWarning, match=rf"annotated_transformer\.{old}\.{name} moved to "
                                                rf"annotated_transformer\.{new}\.{name}"):
        assert getattr(old_module, name) is getattr(new_module, name)


def test_an_old_module_still_refuses_a_name_it_never_had():
    import annotated_transformer.model as model
    with pytest.raises(AttributeError, match="has no attribute 'TrainConfig'"):
        getattr(model, "TrainConfig")
