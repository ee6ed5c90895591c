"""The attention explorer (appendix G): its data against the weights it was given, in a notebook that a kernel
executes, and the recording script on a trained run of the test corpus. (The browser half, the view on the book's
pages, is tools/check_site.py's.)"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from annotated_transformer.cli import main as cli
from annotated_transformer.decoding import attention_weights
from annotated_transformer.explorer import (MAX_BYTES, attention_explorer, explorer_example, head_statistics,
                                            load_explorer)
from annotated_transformer.masking import padding_mask, target_mask
from annotated_transformer.model import make_model
from conftest import subprocess_env

REPO = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures"
SPEC = f"tsv:{FIX / 'de_en_train.tsv'};{FIX / 'dev.tsv'};{FIX / 'test.tsv'}"


def page_data(page: str) -> dict:
    "The JSON a page's explorer reads, found as the browser finds it."
    return json.loads(re.search(r'<script type="application/json" class="at-data">(.*?)</script>', page,
                                re.S).group(1))


def tiny_maps(seed=0, n_src=5, n_tgt=4):
    torch.manual_seed(seed)
    model = make_model(10, 10, N=2, d_model=16, d_ff=32, h=2)
    src, tgt = torch.randint(3, 10, (1, n_src)), torch.randint(3, 10, (1, n_tgt))
    return attention_weights(model, src, tgt, padding_mask(src, 0), target_mask(tgt, 0))


def test_the_page_carries_the_weights_in_hundredths():
    maps = tiny_maps()
    page = attention_explorer(maps, source=list("abcde"), target=list("wxyz"), fallback=False).to_html()
    data = page_data(page)
    for kind, w in maps.items():
        kept = torch.tensor(data["examples"][0]["kinds"][kind]["w"])
        assert kept.shape == w[:, 0].shape  # (layers, heads, queries, keys)
        assert (kept / 100 - w[:, 0].double()).abs().max() <= 0.005 + 1e-12  # rounded, not truncated
    assert data["examples"][0]["kinds"]["cross"]["q"] == "target" and data["examples"][0]["tokens"]["source"] == list("abcde")
    assert "<img" not in page  # fallback=False


def test_bad_input_is_refused_with_a_line_that_names_it():
    maps = tiny_maps()
    with pytest.raises(ValueError, match=r"^decoder self: weights for 4 queries and 4 keys, but 3 target and 3 target tokens$"):
        explorer_example(maps, list("abcde"), list("xyz"))
    with pytest.raises(ValueError, match="pass weights and source"):
        attention_explorer(maps)
    with pytest.raises(ValueError, match="either weights or examples="):
        attention_explorer(maps, list("abcde"), list("wxyz"), examples=[])
    with pytest.raises(ValueError, match="at least one example"):
        attention_explorer(examples=[])
    # a softmax in float32 may give 1 + 1e-7: kept (rounded to 1.00); beyond the rounding, refused
    sure = torch.zeros(1, 1, 2, 2)
    sure[..., 0] = 1 + 1e-7
    assert explorer_example(sure, ["a", "b"])["kinds"]["encoder self"]["w"] == [[[[100, 0], [100, 0]]]]
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        explorer_example(sure + 0.01, ["a", "b"])
    nan = {"encoder self": maps["encoder self"].clone().fill_(float("nan"))}
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        explorer_example(nan, list("abcde"))


def test_a_saved_page_stands_alone(tmp_path):
    maps = tiny_maps()
    path = attention_explorer(maps, list("abcde"), list("wxyz"), language="zh_CN").save(tmp_path / "a.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and '<html lang="zh-CN">' in page and 'data-lang="zh_CN"' in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing to fetch


def test_the_static_sentence_follows_the_page_language():
    "Where no script runs, the sentence under the figure is in the page's language; the style alone picks it."
    page = attention_explorer(tiny_maps(), list("abcde"), list("wxyz")).to_html()
    fallback = re.search(r'<div class="at-fallback">(.*?)</div>', page, re.S).group(1)
    assert re.findall(r'<span lang="([^"]+)">', fallback) == ["en", "zh-CN"]
    assert "交互视图需要 JavaScript" in fallback and "The interactive view needs JavaScript" in fallback
    css = (REPO / "annotated_transformer" / "explorer.css").read_text(encoding="utf-8")
    assert '.at-explorer .at-fallback [lang|="zh"] { display: none; }' in css
    assert '.at-explorer:lang(zh) .at-fallback [lang="en"]' in css


def test_head_statistics_average_over_sentences():
    from annotated_transformer.architecture import attention_statistics
    a, b = tiny_maps(0), tiny_maps(1)
    one = lambda m: {k: w[:, 0] for k, w in m.items()}
    stats = head_statistics([one(a), one(b)])
    for kind in a:
        start = 1 if kind == "decoder self" else 0
        for name, v in attention_statistics(a[kind][:, 0], start=start).items():
            w = attention_statistics(b[kind][:, 0], start=start)[name]
            torch.testing.assert_close(torch.tensor(stats[kind]["rows"][name], dtype=torch.float64),
                                       (v + w) / 2, atol=6e-5, rtol=0)
        assert stats[kind]["sentences"] == 2


NOTEBOOK_CELLS = [
    "import torch\n"
    "from annotated_transformer.decoding import attention_weights\n"
    "from annotated_transformer.masking import padding_mask, target_mask\n"
    "from annotated_transformer.model import make_model\n"
    "from annotated_transformer.explorer import attention_explorer\n"
    "torch.manual_seed(0)\n"
    "model = make_model(10, 10, N=2, d_model=16, d_ff=32, h=2)\n"
    "src, tgt = torch.tensor([[3, 4, 5, 6, 2]]), torch.tensor([[1, 7, 8, 9]])\n"
    "maps = attention_weights(model, src, tgt, padding_mask(src, 0), target_mask(tgt, 0))\n"
    "torch.save(maps, 'maps.pt')",
    "attention_explorer(maps, source=list('abcde'), target=list('wxyz'))",
]


def test_the_explorer_renders_in_an_executed_notebook(tmp_path):
    "A kernel runs the three lines; the cell's output is the view: HTML with the data, the script and the figure."
    nbformat, nbclient = pytest.importorskip("nbformat"), pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CELLS])
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute(env=subprocess_env())
    [result] = [o for o in nb.cells[-1].outputs if o.output_type == "execute_result"]
    page = result.data["text/html"]
    assert page.startswith('<div class="at-explorer"') and "window.ATExplorer" in page
    assert "AttentionExplorer(1 example(s)" in result.data["text/plain"]
    maps = torch.load(tmp_path / "maps.pt")
    data = page_data(page)
    for kind, w in maps.items():
        assert data["examples"][0]["kinds"][kind]["w"] == (w[:, 0].double() * 100).round().long().tolist()
    if pytest.importorskip("matplotlib"):
        assert re.search(r'<img alt="[^"]+" src="data:image/png;base64,', page)  # where scripts do not run
    assert len(page.encode()) <= MAX_BYTES


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("explorer") / "run"
    assert cli(["train", "--data", "corpus", "--data-option", f"spec={SPEC}", "--data-option", "vocab_size=350",
                "--N", "1", "--d-model", "32", "--h", "2", "--d-ff", "64", "--warmup", "10", "--max-tokens", "200",
                "--steps", "10", "--eval-every", "10", "--checkpoint-every", "10", "--device", "cpu", "--threads", "1",
                "--no-progress", "--out", str(out)]) == 0
    return out


def test_the_recording_script_writes_what_the_explorer_reads(tiny_run, tmp_path):
    out = tmp_path / "explorer.json"
    script = [sys.executable, str(REPO / "bench" / "collect_attention.py"), str(tiny_run), "--explorer",
              "--sentences", "2", "--explorer-sentences", "2", "--explorer-pieces", "1", "60", "--out", str(out)]
    done = subprocess.run(script, capture_output=True, text=True, env=subprocess_env(), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(out.read_text(encoding="utf-8"))
    assert len(record["examples"]) == 2 and record["scale"] == 100
    assert record["provenance"]["command"].startswith("python bench/collect_attention.py")
    assert set(record["provenance"]) >= {"git", "uncommitted", "date", "torch", "device"}
    from annotated_transformer.translate import Translator
    translator = Translator(tiny_run, avg=1)
    from annotated_transformer.data import load_corpus
    test = load_corpus(SPEC).test
    for example, (source, reference) in zip(record["examples"], test):
        tokens = example["tokens"]
        pieces = [translator.tokenizer.id_to_piece(i) for i in translator.tokenizer.encode(reference)]
        assert tokens["target"] == ["<s>", *pieces] and tokens["source"][-1] == "</s>"
        assert example["text"]["reference"] == reference and example["text"]["source"] == source
        for kind, entry in example["kinds"].items():
            w = torch.tensor(entry["w"])
            assert w.shape[-2:] == (len(tokens[entry["q"]]), len(tokens[entry["k"]]))
            assert ((w.sum(-1) - 100).abs() <= w.size(-1) / 2).all()  # rows of weights summing to 1, in hundredths
    assert set(record["statistics"]) == {"encoder self", "decoder self", "cross"}
    assert record["statistics"]["cross"]["sentences"] == 2
    assert len(load_explorer(out).to_html().encode()) <= MAX_BYTES
    too_many = script[:4] + ["--sentences", "1", "--explorer-sentences", "3", "--out", str(tmp_path / "no.json")]
    asked = subprocess.run(too_many, capture_output=True, text=True, env=subprocess_env(), timeout=300)
    assert asked.returncode == 1 and not (tmp_path / "no.json").exists()
    assert re.fullmatch(r"--explorer-sentences 3: only [012] test sentences have 6 to 16 pieces on each side "
                        r"\(--explorer-pieces\)", asked.stderr.strip().splitlines()[-1]), asked.stderr[-500:]
