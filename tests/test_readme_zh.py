"""README.zh-CN.md, the Chinese README, against README.md: every section a Chinese reader needs, the same chapters
under their Chinese titles, and only commands that README.md (or tools/book_i18n.py's usage) prints."""
import importlib.util
import re
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from test_readme import shell_commands as block_commands  # one reading of a bash block

REPO = Path(__file__).resolve().parents[1]
EN = (REPO / "README.md").read_text(encoding="utf-8")
ZH = (REPO / "README.zh-CN.md").read_text(encoding="utf-8")
spec = importlib.util.spec_from_file_location("book_i18n", REPO / "tools" / "book_i18n.py")
i18n = importlib.util.module_from_spec(spec)
sys.modules.setdefault("book_i18n", i18n)
spec.loader.exec_module(i18n)

# Each `##` section of README.md and its counterpart in README.zh-CN.md ...
SECTIONS = {
    "Quick start: two commands": "快速开始：两条命令",
    "Using the library": "使用本库",
    "Command line": "命令行",
    "Working on the book": "参与编写本书",
    "Citation": "引用",
}
# ... or why the Chinese README does without it.
OMITTED: dict[str, str] = {}
# The `###` subsections, likewise.
SUBSECTIONS = {
    "The Chinese edition (中文版)": "中文版",
    "Installing by hand, and with CUDA": "手动安装，以及 CUDA",
}


def tokens(text: str):
    return MarkdownIt("commonmark").enable("table").parse(text)


def headings(text: str, level: int) -> list[str]:
    found = tokens(text)
    return [found[k + 1].content for k, t in enumerate(found) if t.type == "heading_open" and t.tag == f"h{level}"]


def shell_commands(text: str) -> list[str]:
    "The commands of a README's bash blocks, each block read as tests/test_readme.py reads it."
    return [c for t in tokens(text) if t.type == "fence" and t.info.strip() == "bash"
            for c in block_commands(t.content)]


def test_every_section_of_the_english_readme_has_its_chinese_counterpart():
    english, chinese = headings(EN, 2), headings(ZH, 2)
    unaccounted = [h for h in english if h not in SECTIONS and h not in OMITTED]
    assert not unaccounted, f"README.md sections with no Chinese counterpart in tests/test_readme_zh.py: {unaccounted}"
    assert [SECTIONS[h] for h in english if h in SECTIONS] == chinese, "README.zh-CN.md's ## sections, in order"
    assert all(reason.strip() for reason in OMITTED.values())
    assert [SUBSECTIONS[h] for h in headings(EN, 3)] == headings(ZH, 3)


def test_every_command_is_one_that_the_english_readme_prints():
    english = set(shell_commands(EN))
    usage = {re.sub(r"\s+#\s.*$", "", line).strip()
             for line in i18n.__doc__.splitlines() if "tools/book_i18n.py" in line}
    chinese = shell_commands(ZH)
    assert set(english) - {"source .venv/bin/activate"} <= set(chinese), sorted(english - set(chinese))
    invented = [c for c in chinese if c not in english and re.sub(r"\s+", " ", c) not in usage]
    assert not invented, f"commands in README.zh-CN.md that neither README.md nor book_i18n.py prints: {invented}"
    python = lambda text: [t.content for t in tokens(text) if t.type == "fence" and t.info.strip() == "python"]  # noqa
    assert python(ZH) == python(EN)


@pytest.mark.parametrize("fact", [
    "pip install torch==2.13.0",                # the CPU build of PyTorch first
    "--data-option spec=tatoeba",               # the shipped Chinese→English pairs
    "Colab", "Binder", "大约一分钟",              # each chapter opens in Colab or Binder and runs in about a minute
    "MIT 许可证", "arXiv:1706.03762",            # licence and citation
    "**True 表示“可以关注”**",                   # the conventions
])
def test_the_chinese_readme_says_what_a_newcomer_needs(fact):
    assert fact in ZH


def test_the_chapter_table_links_every_chapter_under_its_chinese_title():
    link = re.compile(r"^\| [\w]+ \| \[(.+?)\]\((nbs/[\w.]+\.ipynb)\)", re.M)
    english, chinese = link.findall(EN), link.findall(ZH)
    assert [path for _, path in english] == [path for _, path in chinese]  # every chapter, in the same order
    catalogs = i18n.catalogs()
    for (en_text, path), (zh_text, _) in zip(english, chinese):
        assert (REPO / path).is_file()
        chapter = path[:-len(".ipynb")]
        title = i18n.page_titles(chapter)[0]
        if en_text == title:  # where README.md gives the chapter's own title, the Chinese README gives its Chinese one
            assert zh_text == i18n._read(catalogs[chapter])[title].string, (path, zh_text)
        assert re.search(r"[\u4e00-\u9fff]", zh_text) or zh_text == en_text, (path, zh_text)


def test_the_relative_links_of_the_chinese_readme_exist():
    targets = re.findall(r"\]\((?!https?://|#)([^)\s]+)\)", ZH)
    assert targets and not [t for t in targets if not (REPO / t.split("#")[0]).exists()]
