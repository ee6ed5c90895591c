"""The website's API reference (api/*.md, one page per module, written by tools/make_stubs.py): in the table of
contents, English in both editions, and built by Sphinx autodoc with the book's own settings (-W -n) without
building the book: only the API pages, with one-line stand-ins for the chapters they link to."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import subprocess_env

REPO = Path(__file__).resolve().parents[1]
API = REPO / "api"
CONFIG = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
TOC = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))


def test_the_toc_lists_every_page_in_the_index_order():
    part = next(p for p in TOC["parts"] if p["caption"] == "API reference")
    (index,) = part["chapters"]
    listed = [s["file"] for s in index.get("sections", [])]
    order = re.findall(r"^\| \{doc\}`(\w+)`", (API / "index.md").read_text(encoding="utf-8"), re.M)
    assert index["file"] == "api/index" and listed == [f"api/{m}" for m in order], (
        "_toc.yml's part 'API reference' must list api/index with a section per module, in api/index.md's order")
    assert {p.stem for p in API.glob("*.md")} == {"index", *order}


def test_the_reference_is_english_only_in_the_chinese_edition():
    sys.path.insert(0, str(REPO / "tools"))
    import book_i18n
    assert book_i18n._english_only("api/trainer") and book_i18n._english_only("api/index")
    assert not book_i18n._english_only("nbs/02_attention")
    assert "本参考" in (API / "index.md").read_text(encoding="utf-8")  # the page says so in Chinese too
    assert "API reference" in book_i18n.captions("zh_CN")


def test_the_reference_builds_without_warnings(tmp_path):
    "sphinx-build -W -n of the API pages with _config.yml's extensions and settings; autodoc's content is there."
    src = tmp_path / "src"
    shutil.copytree(API, src / "api")
    for page in API.glob("*.md"):
        for chapter in re.findall(r"\{doc\}`\.\./(nbs/[^`]+)`", page.read_text(encoding="utf-8")):
            stand_in = src / f"{chapter}.md"
            stand_in.parent.mkdir(exist_ok=True)
            stand_in.write_text(f"# {chapter}\n", encoding="utf-8")
    (src / "index.md").write_text("# Book\n\n```{toctree}\n:glob:\napi/index\napi/*\nnbs/*\n```\n", encoding="utf-8")
    sphinx = CONFIG["sphinx"]
    extensions = ["myst_parser", *sphinx.get("extra_extensions", []), *sphinx.get("local_extensions", {})]
    settings = {k: v for k, v in sphinx.get("config", {}).items() if k.startswith(("nitpick", "autodoc"))}
    (src / "conf.py").write_text(
        f"import sys\nsys.path[:0] = {sorted({str(REPO / f) for f in sphinx['local_extensions'].values()})!r}\n"
        f"extensions = {extensions!r}\nmyst_enable_extensions = {CONFIG['parse']['myst_enable_extensions']!r}\n"
        + "".join(f"{k} = {v!r}\n" for k, v in settings.items()), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "sphinx", "-b", "text", "-q", "-W", "-n", "--keep-going",
                          str(src), str(tmp_path / "out")], capture_output=True, text=True, env=subprocess_env(),
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    trainer = " ".join((tmp_path / "out" / "api" / "trainer.txt").read_text(encoding="utf-8").split())
    assert "fit(steps: int | None = None" in trainer  # a method the chapter adds with @patch
    assert "train until this many updates have been made" in trainer  # its parameter's comment (docments)
    multihead = " ".join((tmp_path / "out" / "api" / "multihead.txt").read_text(encoding="utf-8").split())
    assert "forward(query: Tensor" in multihead and "the sequence that asks" in multihead
    assert "Define the computation performed at every call" not in multihead  # not nn.Module's docstring
