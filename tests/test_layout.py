"""The package's rooms and which may import which (issue 10): read from the source with `ast`, nothing is imported.

Each module may import only the modules listed for it. In particular nothing of the model or decoding stack
imports the training module, and no import runs back up the chapters."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "annotated_transformer"
ALLOWED = {  # module: the package modules it may import
    "attention": set(),
    "masking": set(),
    "multihead": {"attention", "masking"},
    "positional": {"masking"},
    "sublayers": {"masking"},
    "model": {"attention", "masking", "multihead", "positional", "sublayers"},
    "batching": {"masking"},
    "checkpoint": set(),
    "decoding": {"checkpoint", "masking", "model", "multihead", "positional"},
    "data": set(),
    "subwords": {"batching", "data"},
    "copytask": {"batching", "masking", "subwords"},
    "torch_compare": {"model", "multihead", "positional"},
    "training": {"batching", "checkpoint", "copytask", "masking", "model", "subwords", "torch_compare"},
    "translate": {"batching", "checkpoint", "cli", "data", "decoding", "masking", "model", "multihead", "subwords", "torch_compare", "training"},
    "train": {"checkpoint", "cli", "copytask", "model", "training"},
    "cli": set(),
    "pitfalls": {"attention", "decoding", "masking", "model", "multihead", "sublayers", "translate"},  # the last chapter
}


def package_imports(module: str) -> set[str]:
    "The package modules that `module` imports at any level (relative or absolute imports)."
    tree = ast.parse((PKG / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            name = node.module or ""
            if node.level == 1:
                found.add(name.split(".")[0] if name else "")
                found |= {a.name for a in node.names} if not name else set()
            elif name.startswith("annotated_transformer."):
                found.add(name.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("annotated_transformer.")}
    return found - {""}


def test_every_module_is_listed():
    modules = {p.stem for p in PKG.glob("*.py")} - {"__init__", "_modidx"}
    assert modules == set(ALLOWED)


def test_modules_import_only_what_they_may():
    for module, allowed in ALLOWED.items():
        assert package_imports(module) <= allowed, (module, package_imports(module) - allowed)


def test_no_string_imports_of_the_package():
    "A module named in a string ('annotated_transformer.x:f') hides an import from this test; only the CLI may."
    for module in set(ALLOWED) - {"cli"}:
        text = (PKG / f"{module}.py").read_text(encoding="utf-8")
        assert '"annotated_transformer.' not in text, module
