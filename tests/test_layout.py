"""The package's rooms, read from the source with `ast` (nothing is imported).

Every module is written by one chapter (its notebook's `#| default_exp`), and the chapters have an order: the
reading order of `_toc.yml`. A module may import only modules of earlier chapters, so that a reader who has read up
to a chapter has seen everything its code uses; the one exception is a support module (SUPPORT below). No module reaches into another's private names, imports the
package by its absolute name (which would hide an import from this test), or names a module in a string.
Set LAYOUT_PACKAGE to another checkout's `annotated_transformer` folder to check that one instead."""
import ast
import json
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PKG = Path(os.environ.get("LAYOUT_PACKAGE", REPO / "annotated_transformer"))
NBS = PKG.parent / "nbs"
MODULES = sorted(p.stem for p in PKG.glob("*.py") if p.stem not in ("__init__", "_modidx"))


def reading_order() -> list[str]:
    "The notebooks of _toc.yml, root first, in the order the book presents them."
    toc = (PKG.parent / "_toc.yml").read_text(encoding="utf-8")
    return re.findall(r"^root:\s*nbs/(\S+)", toc, re.M) + re.findall(r"^\s*- file:\s*nbs/(\S+)", toc, re.M)


def chapter_of() -> dict[str, str]:
    "module -> the notebook whose `#| default_exp` writes it."
    found = {}
    for nb in NBS.glob("*.ipynb"):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            m = re.search(r"^#\|\s*default_exp\s+(\w+)", "".join(cell["source"]), re.M)
            if m:
                found[m.group(1)] = nb.stem
    return found


def imports_of(module: str) -> list[tuple[str, list[str], int]]:
    "(imported module, imported names, level) for every import statement in `module`, at any depth."
    tree = ast.parse((PKG / f"{module}.py").read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.append((node.module or "", [a.name for a in node.names], node.level))
        elif isinstance(node, ast.Import):
            found += [(a.name, [], 0) for a in node.names]
    return found


def package_imports(module: str) -> set[str]:
    "The package modules that `module` imports (relative imports; `from . import x` counts as x)."
    found = set()
    for name, names, level in imports_of(module):
        if level == 1:
            found |= {name.split(".")[0]} if name else set(names)
        elif name.split(".")[0] == "annotated_transformer":
            found.add(name.split(".")[1] if "." in name else "__init__")
    return found


def test_every_module_has_one_chapter_in_the_book():
    chapters, order = chapter_of(), reading_order()
    for module in MODULES:
        assert module in chapters, f"{module}.py is written by no notebook's default_exp"
        assert chapters[module] in order, f"{module}.py comes from {chapters[module]}, which _toc.yml leaves out"


# Support modules: written by an appendix, usable by every chapter. The input checks (`checks`, appendix A) and the
# reading of files written by earlier releases (`compat`, appendix E) are tools rather than ideas of the paper: the
# chapters call them and the appendices explain them, so that they stay off the reader's path. A support module
# imports nothing of the package, so it cannot hide a dependency on a later chapter.
SUPPORT = {"checks", "compat"}


def test_support_modules_import_nothing_of_the_package():
    leaning = {m: sorted(package_imports(m)) for m in SUPPORT if package_imports(m)}
    assert not leaning, f"support modules must stand alone: {leaning}"


def test_no_module_imports_a_later_chapter():
    chapters, order = chapter_of(), reading_order()
    rank = {m: order.index(chapters[m]) for m in MODULES if chapters.get(m) in order and m not in SUPPORT}
    later = [(m, other) for m in MODULES for other in sorted(package_imports(m))
             if other in rank and m in rank and rank[other] > rank[m]]
    assert not later, "modules importing a later chapter: " + ", ".join(
        f"{m} ({chapters[m]}) imports {o} ({chapters[o]})" for m, o in later)


def test_no_module_imports_the_package_by_name():
    "`import annotated_transformer...` inside the package hides a dependency (and can close a loop through __init__)."
    absolute = [(m, name) for m in MODULES for name, _, level in imports_of(m)
                if level == 0 and name.split(".")[0] == "annotated_transformer"]
    assert not absolute, absolute


def test_no_module_imports_another_modules_private_names():
    private = [(m, name, n) for m in MODULES for name, names, level in imports_of(m) if level >= 1
               for n in names if n.startswith("_") and n != "__future__"]
    assert not private, private


def test_no_string_imports_of_the_package():
    "A module named in a string ('annotated_transformer.x:f') hides an import from these tests."
    named = [m for m in MODULES if re.search(r"[\"']annotated_transformer\.\w+[:\"']", (PKG / f"{m}.py").read_text())]
    assert not named, named


def test_every_module_says_what_it_is():
    for module in MODULES:
        doc = ast.get_docstring(ast.parse((PKG / f"{module}.py").read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 5, f"{module}.py has no module docstring"


def test_no_module_outgrows_the_others():
    "One room, one job: no module holds more than 12 % of the package's lines."
    lines = {m: len((PKG / f"{m}.py").read_text(encoding="utf-8").splitlines()) for m in MODULES}
    total = sum(lines.values())
    biggest = max(lines, key=lines.get)
    assert lines[biggest] <= 0.12 * total, f"{biggest}.py has {lines[biggest]} of {total} lines"


def _code_lines(cell: dict) -> int:
    "Lines of a code cell, not counting its `#|` directives (export, fold, hide: instructions, not code)."
    return sum(1 for line in "".join(cell["source"]).splitlines() if not line.lstrip().startswith("#|"))


def test_code_cells_stay_short():
    "A cell of code is one idea: at most 60 lines of code in every chapter."
    long = [(nb.name, i, _code_lines(c)) for nb in sorted(NBS.glob("*.ipynb"))
            for i, c in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"])
            if c["cell_type"] == "code" and _code_lines(c) > 60]
    assert not long, f"code cells over 60 lines (notebook, index, lines): {long}"


def _chapter_ids() -> dict[str, str]:
    "chapter id as the text writes it (07, 7, A) -> notebook stem."
    ids = {}
    for nb in NBS.glob("*.ipynb"):
        number = nb.stem.split("_")[0]
        ids[number] = nb.stem
        ids[number.lstrip("0") or "0"] = nb.stem  # "chapter 7" for 07
    return ids


def _defined_in(module: str) -> set[str]:
    tree = ast.parse((PKG / f"{module}.py").read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


CHAPTER_REF = re.compile(r"\b[Cc]hapters? (\d\d?[a-z]?\d?)\b")
NAME_THEN_CHAPTER = re.compile(r"`?([A-Za-z_][A-Za-z0-9_]*)`? \([Cc]hapter (\d\d?[a-z]?\d?)\)")
CHAPTER_THEN_NAME = re.compile(r"\b[Cc]hapter (\d\d?[a-z]?\d?)'s `?([A-Za-z_][A-Za-z0-9_]*)`?")


def test_chapter_references_in_the_package_name_the_right_chapter():
    "'chapter 20' exists; 'X (chapter NN)' and \"chapter NN's X\" name the chapter whose notebook defines X."
    ids, chapters = _chapter_ids(), chapter_of()
    # chapter 01 restates the model on one page under the same names: a name belongs to the chapter that builds it
    # a name may be defined in two chapters (chapter 12's make_batch extends chapter 08's): either is right
    defined = {}
    for m in MODULES:
        if m in chapters and m != "one_page":
            for name in _defined_in(m):
                defined.setdefault(name, set()).add(chapters[m])
    wrong = []
    for m in MODULES:
        text = (PKG / f"{m}.py").read_text(encoding="utf-8")
        wrong += [(m, f"chapter {c}", "no such chapter") for c in CHAPTER_REF.findall(text) if c not in ids]
        pairs = NAME_THEN_CHAPTER.findall(text) + [(n, c) for c, n in CHAPTER_THEN_NAME.findall(text)]
        wrong += [(m, f"{name} (chapter {c})", f"defined in {defined[name]}") for name, c in pairs
                  if name in defined and c in ids and ids[c] not in defined[name]]
    assert not wrong, wrong


def test_no_markdown_line_starts_with_a_percent_sign():
    """MyST reads a line that starts with % as a comment and drops it from the page, so a paragraph wrapped just
    before "%" ("here 23\\n% and 11 %") loses the rest of its line without a warning."""
    found = []
    for nb in sorted(Path(__file__).resolve().parents[1].joinpath("nbs").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "markdown":
                found += [f"{nb.name} cell {i}: {line[:60]!r}" for line in "".join(cell["source"]).splitlines()
                          if line.startswith("%")]
    assert not found, f"markdown lines that MyST drops as comments: {found}"


def _patched_classes(module: str) -> list[tuple[str, str]]:
    "(class, method) for every `@patch` function of `module`, the class read from its first argument's annotation."
    found = []
    for node in ast.parse((PKG / f"{module}.py").read_text(encoding="utf-8")).body:
        patched = any((isinstance(d, ast.Name) and d.id == "patch") or
                      (isinstance(d, ast.Call) and getattr(d.func, "id", "") == "patch") for d in node.decorator_list) \
            if isinstance(node, ast.FunctionDef) else False
        if patched and node.args.args and isinstance(node.args.args[0].annotation, ast.Name):
            found.append((node.args.args[0].annotation.id, node.name))
    return found


def test_no_module_adds_to_another_modules_class():
    """A class is finished in its own chapter: a later module extends it by subclassing, an extension point or
    composition, never by patching a method onto it, so importing a module never changes a class of another."""
    own = {m: _defined_in(m) for m in MODULES}
    found = [f"{m} patches {cls}.{name}" for m in MODULES for cls, name in _patched_classes(m) if cls not in own[m]]
    assert not found, "\n".join(found)


def test_the_patch_rule_sees_a_patch_across_modules(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("class A: pass\n")
    (tmp_path / "b.py").write_text("from fastcore.basics import patch\n@patch\ndef f(self: A): pass\n")
    monkeypatch.setattr(__import__(__name__), "PKG", tmp_path)
    assert _patched_classes("b") == [("A", "f")] and "A" not in _defined_in("b")
