"""Write the package's type stubs, `annotated_transformer/*.pyi`, from the objects the package builds at run time.

Why: the chapters add methods to a class in later cells with fastcore's `@patch` (`Trainer.fit`,
`Translator.translate`, `MultiHeadAttention.forward`, ...), so a type checker or an IDE reading the source sees a
class without them. A stub describes each module as it is once imported: every class with all its methods (patched
ones included), every signature with the annotations written in the notebooks, and each docstring followed by the
parameters' comments (nbdev's docments), which IDE hovers show.

It also writes the website's API reference, api/NAME.md for each module (Sphinx autodoc reads the docstrings at
build time; _ext/api_docments.py adds the parameters' comments) and api/index.md listing the modules with their
chapters.

    python tools/make_stubs.py           # (re)write the stubs, api/*.md and _toc.yml's API part; after nbdev_export
    python tools/make_stubs.py --check   # exit 1, naming the stale files, if what is written differs

tests/test_stubs.py fails when the committed files are not what this script writes now.
"""
from __future__ import annotations

import argparse
import ast
import builtins
import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
import textwrap
import types
import typing
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "annotated_transformer"
HEADER = ("# Type stubs of {module}, written by tools/make_stubs.py from the imported package: do not edit.\n"
          "# Regenerate with `python tools/make_stubs.py` after nbdev_export.\n")
# the dunder methods a user calls through syntax; the others (__repr__, __eq__, ...) are object's
DUNDERS = {"__init__", "__call__", "__len__", "__iter__", "__next__", "__getitem__", "__setitem__", "__contains__",
           "__enter__", "__exit__", "__bool__", "__post_init__"}
INDENT = "    "


def _docments(fn) -> dict:
    "The parameters' comments of `fn` (nbdev's docments), or {} where its source cannot be read."
    try:
        from fastcore.docments import docments
        return {k: v for k, v in docments(fn, full=False).items() if v and k != "self"}
    except Exception:  # a builtin, a C function, a signature docments cannot parse
        return {}


def _docstring(obj, fn=None, indent: str = INDENT) -> str:
    "A docstring block: the object's docstring, then one line per commented parameter."
    doc = obj if isinstance(obj, str) else obj.__doc__  # its own docstring, not one inherited (getdoc would)
    doc = inspect.cleandoc(doc) if isinstance(doc, str) else None
    params = _docments(fn) if fn is not None else {}
    lines = doc.splitlines() if doc else []
    if params:
        lines += ([""] if lines else []) + ["Parameters:"]
        for name, comment in params.items():
            head = "returns" if name == "return" else name
            lines += [f"- {head}: " + " ".join(comment.split())]
    if not lines:
        return ""
    text = "\n".join(lines).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text += " "
    if len(lines) == 1:
        return f'{indent}"""{text}"""\n'
    return f'{indent}"""' + textwrap.indent(text, indent).lstrip() + f'\n{indent}"""\n'


class Stub:
    "The stub of one module: the names it binds (imports and its own definitions) and its text."

    def __init__(self, module: types.ModuleType):
        self.module = module
        self.name = module.__name__
        self.bound: dict[str, object] = {}  # a name the stub binds -> the object it stands for
        self.imports: dict[str, str] = {}   # a name the stub imports -> its import line
        self.typevars: dict[str, str] = {}
        self.own: set[str] = set()          # names the stub defines itself

    # ---- names -------------------------------------------------------------------------------------------------
    def _import_line(self, local: str, obj) -> str | None:
        "The line that binds `obj` to `local` in the stub, or None where no importable home is found."
        if isinstance(obj, types.ModuleType):
            name = obj.__name__
            if local == name:
                return f"import {name}"
            if "." in name and name.rsplit(".", 1)[1] == local:
                return f"from {name.rsplit('.', 1)[0]} import {local}"
            return f"import {name} as {local}"
        home = self._home(obj)
        if home is None:
            return None
        module, attr = home
        return f"from {module} import {attr}" + ("" if attr == local else f" as {local}")

    @staticmethod
    def _home(obj) -> tuple[str, str] | None:
        "(module, attribute) under which `obj` can be imported, the shortest public module path first."
        module = getattr(obj, "__module__", None)
        qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or getattr(obj, "_name", None)
        if not module or not qual or "." in qual or "<" in qual:
            return None
        if module.startswith(PACKAGE + ".") and getattr(sys.modules.get(module), qual, None) is obj:
            return module, qual  # the package's own names from the module that defines them, not through __init__
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            candidate = ".".join(parts[:i])
            if any(p.startswith("_") for p in parts[1:i]):
                continue
            if getattr(sys.modules.get(candidate), qual, None) is obj:
                return candidate, qual
        if getattr(sys.modules.get(module), qual, None) is obj:
            return module, qual
        return None

    def bind(self, name: str, obj) -> str | None:
        "The name under which the stub refers to `obj` (found as `name` somewhere), importing it if need be."
        if getattr(self.module, name, None) is obj and name in self.own:
            return name
        if isinstance(obj, typing.TypeVar) and getattr(self.module, name, None) is obj:
            self.typevars[name] = f"{name} = TypeVar({name!r})"
            self.imports.setdefault("TypeVar", "from typing import TypeVar")
            self.bound["TypeVar"] = typing.TypeVar
            return name
        for local, known in self.bound.items():
            if known is obj and (local == name or local.endswith("_" + name)):
                return local
        local = name
        while local in self.own or (local in self.bound and self.bound[local] is not obj):
            local = "_" + local
        line = self._import_line(local, obj)
        if line is None:
            return None
        self.bound[local], self.imports[local] = obj, line
        return local

    def any_(self) -> str:
        return self.bind("Any", typing.Any) or "typing.Any"

    # ---- annotations ---------------------------------------------------------------------------------------
    def annotation(self, ann, namespace: dict) -> str | None:
        "The stub's text for an annotation (a string under `from __future__ import annotations`, or an object)."
        if ann is inspect.Parameter.empty or ann is inspect.Signature.empty:
            return None
        if not isinstance(ann, str):
            return self._object_annotation(ann)
        try:
            tree = ast.parse(ann, mode="eval")
            while isinstance(tree.body, ast.Constant) and isinstance(tree.body.value, str):
                tree = ast.parse(tree.body.value, mode="eval")  # a quoted annotation inside the string
        except SyntaxError:
            return self.any_()
        renames = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id not in renames:
                if node.id in namespace:
                    local = self.bind(node.id, namespace[node.id])
                elif hasattr(builtins, node.id):
                    local = node.id
                else:
                    local = None
                if local is None:
                    return self.any_()
                renames[node.id] = local
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                node.id = renames[node.id]
        return ast.unparse(tree)

    def _object_annotation(self, ann) -> str:
        if ann is None or ann is type(None):
            return "None"
        if isinstance(ann, type) and getattr(builtins, ann.__name__, None) is ann:
            return ann.__name__
        if isinstance(ann, type):
            return self.bind(ann.__name__, ann) or self.any_()
        return self.any_()

    def value_type(self, value, namespace: dict, annotation=None) -> str:
        "The declared type of a module or class attribute: its annotation, else the type of its value."
        if annotation is not None:
            text = self.annotation(annotation, namespace)
            if text:
                return text
        kind = type(value)
        if getattr(builtins, kind.__name__, None) is kind and kind is not type(None):
            return kind.__name__
        return self.bind(kind.__name__, kind) or self.any_()

    # ---- definitions ---------------------------------------------------------------------------------------
    def signature(self, fn, method: bool, namespace: dict | None = None) -> str:
        "`(params) -> ret` of `fn`, defaults shown as `...`; a method's first parameter unannotated."
        target = inspect.unwrap(fn)
        namespace = getattr(target, "__globals__", None) or namespace or vars(self.module)
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return f"(self, *args: {self.any_()}, **kwargs: {self.any_()}) -> {self.any_()}" if method else \
                f"(*args: {self.any_()}, **kwargs: {self.any_()}) -> {self.any_()}"
        parts, seen_kwonly, seen_posonly = [], False, False
        for i, p in enumerate(sig.parameters.values()):
            if p.kind is p.POSITIONAL_ONLY:
                seen_posonly = True
            elif seen_posonly:
                parts.append("/")
                seen_posonly = False
            if p.kind is p.KEYWORD_ONLY and not seen_kwonly:
                parts.append("*")
                seen_kwonly = True
            text = p.name
            if p.kind is p.VAR_POSITIONAL:
                text, seen_kwonly = "*" + p.name, True
            elif p.kind is p.VAR_KEYWORD:
                text = "**" + p.name
            ann = None if (method and i == 0) else self.annotation(p.annotation, namespace)
            if ann:
                text += f": {ann}"
            if p.default is not p.empty:
                text += " = ..." if ann else "=..."
            parts.append(text)
        if seen_posonly:
            parts.append("/")
        ret = self.annotation(sig.return_annotation, namespace)
        if ret is None and getattr(fn, "__name__", "") in ("__init__", "__post_init__"):
            ret = "None"
        return f"({', '.join(parts)})" + (f" -> {ret}" if ret else "")

    def function(self, name: str, fn, indent: str = "", decorator: str | None = None, method: bool = False,
                 namespace: dict | None = None) -> str:
        head = f"{indent}@{decorator}\n" if decorator else ""
        is_async = inspect.iscoroutinefunction(inspect.unwrap(fn))
        sig = self.signature(fn, method, namespace)
        doc = _docstring(fn, fn, indent + INDENT)
        if doc:
            return f"{head}{indent}{'async ' if is_async else ''}def {name}{sig}:\n{doc}"
        return f"{head}{indent}{'async ' if is_async else ''}def {name}{sig}: ...\n"

    def klass(self, name: str, cls: type) -> str:
        namespace = vars(sys.modules[cls.__module__])
        lines: list[str] = []
        orig = getattr(cls, "__orig_bases__", ())
        is_namedtuple = typing.NamedTuple in orig if hasattr(typing, "NamedTuple") else False
        if is_namedtuple or (issubclass(cls, tuple) and hasattr(cls, "_fields")):
            bases = [self.bind("NamedTuple", typing.NamedTuple) or "NamedTuple"]
        else:
            bases = []
            for base in cls.__bases__:
                if base is object:
                    continue
                if getattr(builtins, base.__name__, None) is base:
                    bases.append(base.__name__)
                else:
                    bases.append(self.bind(base.__name__, base) or self.any_())
        head = f"class {name}" + (f"({', '.join(bases)})" if bases else "") + ":\n"
        doc = _docstring(cls)
        if doc:
            lines.append(doc)
        declared: set[str] = set()
        members = cls.__dict__
        own_annotations = members.get("__annotations__", {})
        for attr, ann in own_annotations.items():
            if attr.startswith("_") and not is_namedtuple:
                continue
            lines.append(f"{INDENT}{attr}: {self.annotation(ann, namespace) or self.any_()}\n")
            declared.add(attr)
        # instance attributes set in the methods (`self.x = ...`), the patched methods' included
        methods = {a for a, v in members.items() if callable(v) or isinstance(v, (property, staticmethod,
                                                                                 classmethod))}
        for attr in sorted(self._instance_attributes(cls) - declared - methods - set(dir(object))):
            if not attr.startswith("_"):
                lines.append(f"{INDENT}{attr}: {self.any_()}\n")
                declared.add(attr)
        for attr, value in members.items():
            if attr in declared:
                continue
            private = attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__"))
            if private or (attr.startswith("__") and attr not in DUNDERS):
                continue
            if isinstance(value, staticmethod):
                lines.append(self.function(attr, value.__func__, INDENT, "staticmethod", namespace=namespace))
            elif isinstance(value, classmethod):
                lines.append(self.function(attr, value.__func__, INDENT, "classmethod", method=True,
                                           namespace=namespace))
            elif isinstance(value, property):
                getter = value.fget
                ret = self.annotation(inspect.signature(getter).return_annotation,
                                      inspect.unwrap(getter).__globals__) if getter else None
                body = _docstring(getter, None, INDENT * 2) if getter else ""
                lines.append(f"{INDENT}@property\n{INDENT}def {attr}(self)" + (f" -> {ret}" if ret else "")
                             + (f":\n{body}" if body else ": ...\n"))
                if value.fset is not None:
                    lines.append(f"{INDENT}@{attr}.setter\n{INDENT}def {attr}(self, value: "
                                 f"{ret or self.any_()}) -> None: ...\n")
            elif inspect.isfunction(value) or (callable(value) and hasattr(value, "__wrapped__")):
                lines.append(self.function(attr, value, INDENT, method=True, namespace=namespace))
            elif inspect.isclass(value) or callable(value) and not inspect.isroutine(value):
                lines.append(f"{INDENT}{attr}: {self.value_type(value, namespace)}\n")
            elif not callable(value) and not isinstance(value, (types.MemberDescriptorType,
                                                                 types.GetSetDescriptorType)):
                lines.append(f"{INDENT}{attr}: {self.value_type(value, namespace)}\n")
        if dataclasses.is_dataclass(cls) and "__init__" not in members:
            lines.append(self.function("__init__", cls.__init__, INDENT, method=True, namespace=namespace))
        return head + ("".join(lines) if lines else f"{INDENT}...\n")

    @staticmethod
    def _instance_attributes(cls: type) -> set[str]:
        "Names assigned as `self.NAME = ...` (or annotated) in the class's functions, wherever they were defined."
        found: set[str] = set()
        for value in cls.__dict__.values():
            fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            fn = fn.fget if isinstance(fn, property) else fn
            if not inspect.isfunction(fn) and not hasattr(fn, "__wrapped__"):
                continue
            try:
                source = textwrap.dedent(inspect.getsource(inspect.unwrap(fn)))
                tree = ast.parse(source)
            except (OSError, TypeError, SyntaxError):
                continue
            fdef = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
            if fdef is None or not fdef.args.args:
                continue
            me = fdef.args.args[0].arg
            for node in ast.walk(fdef):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
                for target in targets:
                    for t in ast.walk(target):
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                            found.add(t.attr)
        return found

    # ---- the module ----------------------------------------------------------------------------------------
    def render(self) -> str:
        module, name = self.module, self.name
        public = list(getattr(module, "__all__", []))
        chosen: list[tuple[str, object]] = []
        for attr, value in vars(module).items():
            if attr.startswith("__"):
                continue
            defined_here = getattr(value, "__module__", None) == name and (inspect.isclass(value)
                                                                          or inspect.isfunction(value))
            if attr in public or (defined_here and (inspect.isclass(value) or not attr.startswith("_"))):
                chosen.append((attr, value))
        listed = {a for a, _ in chosen}
        chosen += [(a, getattr(module, a)) for a in public if a not in listed and hasattr(module, a)]
        self.own = {a for a, v in chosen if getattr(v, "__module__", None) == name
                    and (inspect.isclass(v) or inspect.isfunction(v)) or a in public}
        blocks: list[str] = []
        for attr, value in chosen:
            home = getattr(value, "__module__", None)
            if inspect.isclass(value) and home == name and value.__name__ == attr:
                blocks.append("\n" + self.klass(attr, value))
            elif (inspect.isfunction(value) or hasattr(value, "__wrapped__")) and home == name:
                blocks.append("\n" + self.function(attr, value))
            elif isinstance(value, types.ModuleType) or (home and home != name and
                                                          (inspect.isclass(value) or inspect.isroutine(value))):
                src = self._home(value) if not isinstance(value, types.ModuleType) else None
                if isinstance(value, types.ModuleType):
                    blocks.append(f"import {value.__name__} as {attr}\n")
                elif src:
                    blocks.append(f"from {src[0]} import {src[1]} as {attr}\n" if src[1] == attr
                                  else f"from {src[0]} import {src[1]} as {attr}\n")
                else:
                    blocks.append(f"{attr}: {self.any_()}\n")
            else:
                ann = getattr(module, "__annotations__", {}).get(attr)
                blocks.append(f"{attr}: {self.value_type(value, vars(module), ann)}\n")
        text = HEADER.format(module=name)
        if module.__doc__:
            text += _docstring(module.__doc__, None, "")
        if self.imports:
            text += "\n" + "\n".join(_grouped(self.imports.values())) + "\n"
        if self.typevars:
            text += "\n" + "\n".join(self.typevars.values()) + "\n"
        if public:
            text += "\n__all__ = [" + ", ".join(repr(a) for a in public) + "]\n"
        return text + "".join(blocks)


def _grouped(lines) -> list[str]:
    "Import lines, sorted, with the names imported from one module on one line."
    froms: dict[str, list[str]] = {}
    plain = set()
    for line in set(lines):
        if line.startswith("from "):
            module, names = line[5:].split(" import ", 1)
            froms.setdefault(module, []).append(names)
        else:
            plain.add(line)
    return sorted(plain) + [f"from {m} import {', '.join(sorted(n))}" for m, n in sorted(froms.items())]


def init_stub() -> str:
    "The package's own stub: the names __init__.py imports, re-exported under their names, and __all__."
    pkg = importlib.import_module(PACKAGE)
    tree = ast.parse((REPO / PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    text = HEADER.format(module=PACKAGE)
    if pkg.__doc__:
        text += _docstring(pkg.__doc__, None, "")
    text += "\n__version__: str\n\n"
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names = ", ".join(f"{a.name} as {a.asname or a.name}" for a in node.names)
            text += f"from {'.' * node.level}{node.module or ''} import {names}\n"
    text += "\n__all__ = [" + ", ".join(repr(a) for a in pkg.__all__) + "]\n"
    return text


def stubs() -> dict[str, str]:
    "File name -> text, for the package and each of its public modules."
    pkg = importlib.import_module(PACKAGE)
    out = {"__init__.pyi": init_stub()}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_") or info.ispkg:
            continue
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        out[f"{info.name}.pyi"] = Stub(module).render()
    return out


API = REPO / "api"
API_NOTE = ("The reference is written from the package's docstrings and parameter comments, in English in both "
            "editions of the book.\n\n本参考由代码的文档字符串生成，两个版本均为英文。\n")


def _chapter(module: types.ModuleType) -> str | None:
    "The notebook that a module is exported from (nbs/NAME, without suffix), read from its generated header."
    source = Path(module.__file__).read_text(encoding="utf-8")
    found = re.search(r"File to edit: \.\./(nbs/[^ ]+)\.ipynb", source)
    return found.group(1) if found else None


def api_pages() -> dict[str, str]:
    "api/NAME.md -> text: one reference page per module (Sphinx autodoc), and api/index.md listing them."
    import yaml
    pkg = importlib.import_module(PACKAGE)
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    order = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    modules = [importlib.import_module(f"{PACKAGE}.{m.name}") for m in pkgutil.iter_modules(pkg.__path__)
               if not m.name.startswith("_") and not m.ispkg]
    rank = {c: i for i, c in enumerate(order)}
    modules.sort(key=lambda m: (rank.get(_chapter(m) or "", len(rank)), m.__name__))
    pages, rows = {}, []
    for module in modules:
        short = module.__name__.rsplit(".", 1)[1]
        chapter = _chapter(module)
        summary = " ".join((module.__doc__ or "").split())
        where = f"{{doc}}`../{chapter}`" if chapter in rank else f"`{chapter}.ipynb`" if chapter else "—"
        pages[f"{short}.md"] = (
            f"# `{short}`\n\n"
            f"<!-- written by tools/make_stubs.py from the package's docstrings: do not edit -->\n\n"
            f"The module `{module.__name__}`, written in the chapter {where}. All modules: {{doc}}`index`.\n\n"
            f"{summary}\n\n"
            f"```{{eval-rst}}\n.. automodule:: {module.__name__}\n   :members:\n   :undoc-members:\n"
            f"   :show-inheritance:\n   :member-order: bysource\n```\n")
        rows.append(f"| {{doc}}`{short}` | {where} | {summary.replace('|', '/')} |")
    pages["index.md"] = (
        "# API reference\n\n<!-- written by tools/make_stubs.py: do not edit -->\n\n"
        "`import annotated_transformer` gives the names of its `__all__`; each module below is also importable on "
        "its own, as `annotated_transformer.NAME`. Every module is written in a chapter of the book, which explains "
        "its code; its reference page lists its classes and functions with their signatures, their docstrings and "
        "the comments on their parameters.\n\n" + API_NOTE +
        "\n| Module | Chapter | What it holds |\n|---|---|---|\n" + "\n".join(rows) + "\n")
    return pages


def toc_with_api(pages: dict[str, str]) -> str:
    "_toc.yml with its part 'API reference' listing api/index and, as its sections, the module pages in order."
    toc = (REPO / "_toc.yml").read_text(encoding="utf-8")
    order = re.findall(r"^\| \{doc\}`(\w+)`", pages["index.md"], re.M)
    part = ("  - caption: API reference\n    chapters:\n      - file: api/index\n        sections:\n"
            + "".join(f"          - file: api/{m}\n" for m in order))
    found = re.search(r"^  - caption: API reference\n(?:(?!  - caption:).*\n)*", toc, re.M)
    if found:
        return toc[:found.start()] + part + toc[found.end():]
    back = re.search(r"^  - caption: Back matter\n", toc, re.M)  # a new part, before the back matter
    at = back.start() if back else len(toc)
    return toc[:at] + part + toc[at:]


def written() -> dict[Path, str]:
    "Every file this script writes: the stubs and the API reference pages."
    pages = api_pages()
    return {**{REPO / PACKAGE / n: t for n, t in stubs().items()}, **{API / n: t for n, t in pages.items()},
            REPO / "_toc.yml": toc_with_api(pages)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 naming the stale stubs")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    wanted = written()
    present = set((REPO / PACKAGE).glob("*.pyi")) | set(API.glob("*.md")) | {REPO / "_toc.yml"}
    stale = sorted(p for p, t in wanted.items() if not p.exists() or p.read_text(encoding="utf-8") != t)
    stale += sorted(present - set(wanted))
    if args.check:
        if stale:
            print(f"stale: {', '.join(str(p.relative_to(REPO)) for p in stale)}; regenerate with "
                  "`python tools/make_stubs.py`", file=sys.stderr)
            return 1
        return 0
    for path in present - set(wanted):
        path.unlink()
    API.mkdir(exist_ok=True)
    for path, text in wanted.items():
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(wanted)} files ({len(stale)} changed): annotated_transformer/*.pyi, api/*.md and the "
          "API part of _toc.yml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
