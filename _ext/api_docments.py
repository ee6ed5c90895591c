"""The API reference's docstrings (api/*.md, Sphinx autodoc): each function's parameter comments added.

The package documents a parameter with a comment beside it (nbdev's docments). autodoc shows only docstrings, so
this hook appends a field list made from those comments ("Parameters", "Returns"). The docstrings are plain text, not
reStructuredText: markup characters that reStructuredText would read (`*`, `|`, `_` at a word's end) are kept as
they are written, and `code` in single backquotes is shown as code.
"""
from __future__ import annotations

import re

_CODE = re.compile(r"(?<![`\w])`([^`\n]+)`(?![`\w])")
_RST = re.compile(r"([*|\\]|_(?=\W|$))")


def plain(text: str) -> str:
    "A docstring line as reStructuredText: `x` as inline code, the other markup characters escaped."
    parts, last = [], 0
    for m in _CODE.finditer(text):
        parts.append(_RST.sub(r"\\\1", text[last:m.start()]))
        parts.append(f"``{m.group(1)}``")
        last = m.end()
    parts.append(_RST.sub(r"\\\1", text[last:]))
    return "".join(parts)


def _process(app, what, name, obj, options, lines: list[str]) -> None:
    if not name.startswith("annotated_transformer"):
        return
    lines[:] = [plain(line) for line in lines]
    if what not in ("function", "method", "class"):
        return
    try:
        from fastcore.docments import docments
        target = obj.__init__ if what == "class" else obj
        comments = {k: v for k, v in docments(target, full=False).items() if v and k != "self"}
    except Exception:  # a builtin, a signature docments cannot read
        return
    if not comments:
        return
    if lines and lines[-1].strip():
        lines.append("")
    for param, comment in comments.items():
        text = plain(" ".join(comment.split()))
        lines.append(f":returns: {text}" if param == "return" else f":param {param}: {text}")
    lines.append("")


def setup(app):
    app.connect("autodoc-process-docstring", _process)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
