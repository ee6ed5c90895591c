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
import collections
import collections.abc
import contextlib
import dataclasses
import importlib
import inspect
import math
import os
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
# a generic class written without its parameters means them all Any: the stub says so (mypy --strict asks for it)
BARE_GENERICS = {dict: "Any, Any", list: "Any", set: "Any", frozenset: "Any", tuple: "Any, ...", type: "Any",
                 collections.deque: "Any", collections.defaultdict: "Any, Any", collections.OrderedDict: "Any, Any",
                 collections.Counter: "Any", os.PathLike: "Any", re.Pattern: "Any", re.Match: "Any",
                 contextlib.AbstractContextManager: "Any", collections.abc.Callable: "..., Any",
                 collections.abc.Sequence: "Any", collections.abc.MutableSequence: "Any",
                 collections.abc.Iterable: "Any", collections.abc.Iterator: "Any", collections.abc.Collection: "Any",
                 collections.abc.Set: "Any", collections.abc.Mapping: "Any, Any",
                 collections.abc.MutableMapping: "Any, Any", collections.abc.Generator: "Any, Any, Any"}
# functions whose return type depends on a bool flag: the stub gives them overloads, the flag False (its default)
# returning the first member of the runtime's `A | B`, True the second, a bool of unknown value either
OVERLOADS = {"annotated_transformer.decoding.greedy_decode": "return_scores",
             "annotated_transformer.decoding.sample_decode": "return_scores",
             "annotated_transformer.decoding.beam_search": "return_hypotheses"}


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


def _literal(value) -> str:
    "A default as the stub writes it: numbers, short strings, None, True/False and small tuples of them, else `...`."
    if value is None or isinstance(value, bool):
        return repr(value)
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return repr(value)
    if type(value) in (str, bytes) and len(value) <= 50:
        return repr(value)
    if type(value) is tuple and len(value) <= 4:
        items = [_literal(v) for v in value]
        if "..." not in items:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return "..."


def _patched_classmethod(value):
    "The function of a classmethod that fastcore's `@patch(cls_method=True)` added to a class, else None."
    fn = getattr(value, "f", None)  # fastcore.basics._clsmethod: a descriptor binding `f` to the class
    return fn if type(value).__name__ == "_clsmethod" and inspect.isfunction(fn) else None


def _is_alias(obj) -> bool:
    "A type alias (`Pair = tuple[str, str]`, `X | None`): the stub writes what it stands for."
    return isinstance(obj, (types.GenericAlias, types.UnionType)) or (
        typing.get_origin(obj) is not None and not isinstance(obj, type) and bool(typing.get_args(obj)))


def _package_class(name: str):
    "The class `name` of one of the package's modules (a module may import it only in a function), else None."
    found = {id(v): v for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith(PACKAGE + ".")
             for v in [getattr(m, name, None)] if inspect.isclass(v) and v.__module__.startswith(PACKAGE)}
    return next(iter(found.values())) if len(found) == 1 else None


def _resolve(node: ast.AST, namespace: dict):
    "The object that a name or a dotted name of an annotation stands for in `namespace`, or None."
    if isinstance(node, ast.Name):
        return namespace[node.id] if node.id in namespace else getattr(builtins, node.id, None)
    if isinstance(node, ast.Attribute):
        return getattr(_resolve(node.value, namespace), node.attr, None)
    return None


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
            return self._object_annotation(ann, namespace)
        try:
            tree = ast.parse(ann, mode="eval")
            while isinstance(tree.body, ast.Constant) and isinstance(tree.body.value, str):
                tree = ast.parse(tree.body.value, mode="eval")  # a quoted annotation inside the string
        except SyntaxError:
            return self.any_()
        # generic classes written bare (`dict`, `os.PathLike`): found before their names are renamed
        subscripted = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
        bare = {id(n): args for n in ast.walk(tree) if isinstance(n, (ast.Name, ast.Attribute))
                and id(n) not in subscripted and (args := self._bare_args(_resolve(n, namespace)))}
        renames, aliases = {}, {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id not in renames and node.id not in aliases:
                obj = namespace[node.id] if node.id in namespace else _package_class(node.id)
                if obj is None and hasattr(builtins, node.id):
                    local = node.id
                elif _is_alias(obj):  # `Pair = tuple[str, str]`: written out
                    aliases[node.id] = self._object_annotation(obj, namespace)
                    continue
                else:
                    local = self.bind(node.id, obj) if obj is not None else None
                if local is None:
                    return self.any_()
                renames[node.id] = local
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in renames:
                node.id = renames[node.id]

        class Rewrite(ast.NodeTransformer):
            def visit_Name(self, node):
                if isinstance(node, ast.Name) and node.id in aliases:
                    return ast.parse(aliases[node.id], mode="eval").body
                if id(node) not in bare:
                    return node
                return ast.Subscript(value=node, slice=ast.parse(f"_[{bare[id(node)]}]", mode="eval").body.slice)
            visit_Attribute = visit_Name
        return ast.unparse(Rewrite().visit(tree))

    def _bare_args(self, obj) -> str | None:
        "The parameters that a generic class `obj` written bare stands for (`Any, Any` for dict), else None."
        try:
            args = BARE_GENERICS.get(obj)
        except TypeError:  # unhashable
            return None
        if args is None and getattr(obj, "_nparams", None) and not typing.get_args(obj):
            args = BARE_GENERICS.get(typing.get_origin(obj))  # typing.Dict, typing.Callable, ... written bare
        return args.replace("Any", self.any_()) if args else None

    def _named(self, obj) -> str:
        "The stub's name for a class (or a typing construct): a builtin's own name, else imported."
        if isinstance(obj, type) and getattr(builtins, obj.__name__, None) is obj:
            return obj.__name__
        name = getattr(obj, "__name__", None) or getattr(obj, "_name", None)
        return (self.bind(name, obj) if name else None) or self.any_()

    def _object_annotation(self, ann, namespace: dict | None = None) -> str:
        "The text of an annotation object: classes, `X | Y`, `list[X]`, `Callable[[X], Y]`, `Literal[...]`."
        namespace = vars(self.module) if namespace is None else namespace
        if ann is None or ann is type(None):
            return "None"
        if ann is Ellipsis:
            return "..."
        if ann is typing.Any:
            return self.any_()
        if isinstance(ann, str):
            return self.annotation(ann, namespace) or self.any_()
        if isinstance(ann, typing.ForwardRef):
            return self.annotation(ann.__forward_arg__, namespace) or self.any_()
        if isinstance(ann, list):  # the parameters of a Callable
            return "[" + ", ".join(self._object_annotation(a, namespace) for a in ann) + "]"
        if isinstance(ann, typing.TypeVar):
            return self.bind(ann.__name__, ann) or self.any_()
        origin, args = typing.get_origin(ann), typing.get_args(ann)
        if origin in (typing.Union, types.UnionType):
            return " | ".join(self._object_annotation(a, namespace) for a in args)
        if origin is typing.Literal:
            return f"{self._named(typing.Literal)}[{', '.join(repr(a) for a in args)}]"
        if origin is typing.Annotated:
            return self._object_annotation(args[0], namespace)
        if origin is not None and args:
            head = self._named(origin)
            return f"{head}[{', '.join(self._object_annotation(a, namespace) for a in args)}]"
        if isinstance(ann, type) or getattr(ann, "_nparams", None):
            head, bare = self._named(origin or ann), self._bare_args(ann)
            return f"{head}[{bare}]" if bare and head != self.any_() else head
        return self.any_()

    def value_type(self, value, namespace: dict, annotation=None) -> str:
        "The declared type of a module or class attribute: its annotation, else the type of its value."
        if annotation is not None:
            text = self.annotation(annotation, namespace)
            if text:
                return text
        kind = type(value)
        if getattr(builtins, kind.__name__, None) is kind and kind is not type(None):
            bare = self._bare_args(kind)
            return f"{kind.__name__}[{bare}]" if bare else kind.__name__
        name = self.bind(kind.__name__, kind) or self.any_()
        if isinstance(value, re.Pattern):
            return f"{name}[{type(value.pattern).__name__}]"
        bare = self._bare_args(kind)
        return f"{name}[{bare}]" if bare and name != self.any_() else name

    # ---- definitions ---------------------------------------------------------------------------------------
    def signature(self, fn, method: bool, namespace: dict | None = None, flag: tuple[str, str, str] | None = None,
                  ret: str | None = None) -> str:
        """`(params) -> ret` of `fn`, simple defaults written as they are (others as `...`); a method's first
        parameter unannotated. For an overload, `flag` = (name, annotation, default) replaces that parameter (made
        keyword-only where it has no default) and `ret` the return annotation."""
        target = inspect.unwrap(fn)
        namespace = getattr(target, "__globals__", None) or namespace or vars(self.module)
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return f"(self, *args: {self.any_()}, **kwargs: {self.any_()}) -> {self.any_()}" if method else \
                f"(*args: {self.any_()}, **kwargs: {self.any_()}) -> {self.any_()}"
        parts, seen_kwonly, seen_posonly = [], False, False
        for i, p in enumerate(sig.parameters.values()):
            ann = None if (method and i == 0) else self.annotation(p.annotation, namespace)
            default = None if p.default is p.empty else _literal(p.default)
            if flag and p.name == flag[0]:
                ann, default = flag[1], flag[2]
                if default is None and p.kind is p.POSITIONAL_OR_KEYWORD:
                    p = p.replace(kind=p.KEYWORD_ONLY)
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
            if ann:
                text += f": {ann}"
            if default is not None:
                text += f" = {default}" if ann else f"={default}"
            parts.append(text)
        if seen_posonly:
            parts.append("/")
        if ret is None:
            ret = self.annotation(sig.return_annotation, namespace)
        if ret is None and getattr(fn, "__name__", "") in ("__init__", "__post_init__"):
            ret = "None"
        return f"({', '.join(parts)})" + (f" -> {ret}" if ret else "")

    def function(self, name: str, fn, indent: str = "", decorator: str | None = None, method: bool = False,
                 namespace: dict | None = None) -> str:
        head = f"{indent}@{decorator}\n" if decorator else ""
        is_async = inspect.iscoroutinefunction(inspect.unwrap(fn))
        doc = _docstring(fn, fn, indent + INDENT)
        flag = OVERLOADS.get(f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}")
        if flag:
            signatures = self._overloads(fn, flag, method, namespace)
            head += f"{indent}@{self.bind('overload', typing.overload)}\n"
        else:
            signatures = [self.signature(fn, method, namespace)]
        out = ""
        for sig in signatures:
            if doc:
                out += f"{head}{indent}{'async ' if is_async else ''}def {name}{sig}:\n{doc}"
            else:
                out += f"{head}{indent}{'async ' if is_async else ''}def {name}{sig}: ...\n"
        return out

    def _overloads(self, fn, flag: str, method: bool, namespace: dict | None) -> list[str]:
        "The signatures of `fn`'s overloads on its bool parameter `flag`: False (its default), True, any bool."
        sig = inspect.signature(fn)
        param = sig.parameters[flag]
        ret = self.annotation(sig.return_annotation, getattr(inspect.unwrap(fn), "__globals__", None)
                              or namespace or vars(self.module))
        union = ast.parse(ret or "", mode="eval").body
        if param.default is not False or not (isinstance(union, ast.BinOp) and isinstance(union.op, ast.BitOr)
                                              and not isinstance(union.left, ast.BinOp)):
            raise ValueError(f"OVERLOADS: {fn.__qualname__} needs `{flag}: bool = False` and a return "
                             f"annotation `A | B`, got {param} and {ret}")
        literal = self.bind("Literal", typing.Literal)
        return [self.signature(fn, method, namespace, (flag, f"{literal}[False]", "False"), ast.unparse(union.left)),
                self.signature(fn, method, namespace, (flag, f"{literal}[True]", None), ast.unparse(union.right)),
                self.signature(fn, method, namespace, (flag, "bool", "False"), ret)]

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
                    bare = self._bare_args(base)
                    bases.append(f"{base.__name__}[{bare}]" if bare else base.__name__)
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
        methods = {a for a, v in members.items() if callable(v) or _patched_classmethod(v) is not None
                   or isinstance(v, (property, staticmethod, classmethod))}
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
            elif isinstance(value, classmethod) or _patched_classmethod(value) is not None:
                fn = value.__func__ if isinstance(value, classmethod) else _patched_classmethod(value)
                lines.append(self.function(attr, fn, INDENT, "classmethod", method=True, namespace=namespace))
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
            fn = _patched_classmethod(fn) or fn
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
