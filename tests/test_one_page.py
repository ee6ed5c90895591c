"""Chapter 01's whole Transformer on one page is the package's model without its hardening.

The page's model and `annotated_transformer.model.make_model` share parameter names, so each loads the other's
weights strictly; in float64 both give the same log-probabilities and the same gradients. The page stays a page:
at most 200 lines, with no input checks, no raised errors and no registries."""
import ast
import inspect

import pytest
import torch
from torch.testing import assert_close

from annotated_transformer import one_page
from annotated_transformer.masking import padding_mask, target_mask
from annotated_transformer.model import make_model


def _float64_pair(N=2, d_model=32, d_ff=64, h=4, vocab=23, dropout=0.0):
    torch.set_default_dtype(torch.float64)
    try:
        return (make_model(vocab, vocab, N, d_model, d_ff, h, dropout=dropout),
                one_page.make_model(vocab, N, d_model, d_ff, h, dropout=dropout))
    finally:
        torch.set_default_dtype(torch.float32)


def _batch(vocab=23, seed=0):
    "Two padded sentence pairs, masks made by the package (chapter 03)."
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(3, vocab, (3, 7), generator=g)
    tgt = torch.randint(3, vocab, (3, 6), generator=g)
    src[1, 4:] = 0
    src[2, 2:] = 0
    tgt[1, 3:] = 0
    return src, tgt, padding_mask(src, 0), target_mask(tgt, 0)


@pytest.mark.parametrize("direction", ["package -> page", "page -> package"])
def test_same_log_probabilities_in_float64(direction):
    package, page = _float64_pair()
    source, dest = (package, page) if direction == "package -> page" else (page, package)
    dest.load_state_dict(source.state_dict())  # strict: every name and shape matches
    package.eval(), page.eval()
    src, tgt, src_mask, tgt_mask = _batch()
    with torch.no_grad():
        want = package.generator(package(src, tgt, src_mask, tgt_mask))
        got = page.generator(page(src, tgt, src_mask, tgt_mask))
    real = tgt != 0  # padded target positions attend to nothing useful; compare the real ones
    assert_close(got[real], want[real], rtol=1e-12, atol=1e-12)
    assert_close(page.encode(src, src_mask), package.encode(src, src_mask), rtol=1e-12, atol=1e-12)


def test_same_gradients_in_float64():
    package, page = _float64_pair()
    page.load_state_dict(package.state_dict())
    src, tgt, src_mask, tgt_mask = _batch(seed=1)
    for model in (package, page):
        model.train()  # dropout 0.0: training mode changes nothing but must not break the match
        model.zero_grad()
        model.generator(model(src, tgt, src_mask, tgt_mask))[tgt != 0].sum().backward()
    grads = dict(package.named_parameters())
    for name, p in page.named_parameters():
        assert_close(p.grad, grads[name].grad, rtol=1e-10, atol=1e-12, msg=name)


def test_the_base_model_has_the_package_count_of_parameters():
    package = make_model(37000, 37000)
    page = one_page.make_model(37000)
    count = lambda m: sum(p.numel() for p in m.parameters())
    assert count(page) == count(package) == 63_119_496
    assert page.src_embed[0].lut.weight is page.generator.proj.weight  # §3.4: one matrix


def test_the_page_is_a_page():
    source = inspect.getsource(one_page)
    code = source[source.index("# %%"):].replace(source[source.index("__all__"):].split("\n\n")[0], "")
    lines = [line for line in code.splitlines() if line.strip() and not line.startswith("# %%")]
    assert len(lines) <= 200, f"{len(lines)} lines"  # the notebook's cells, without nbdev's header and __all__
    assert max(map(len, lines)) <= 88
    tree = ast.parse(source)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Raise)], "no input checks on the page"
    assert "check_" not in source and "register(" not in source
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported <= {"__future__", "torch"}, imported  # plain PyTorch, nothing of the package


def test_the_page_initializes_as_the_package():
    "Chapter 07's rules on the page too: Xavier, W^Q, W^K, W^V as one (3d, d) matrix, the table from N(0, 1/d)."
    torch.manual_seed(0)
    d = 64
    page = one_page.make_model(2000, N=1, d_model=d, d_ff=128, h=4)
    package = make_model(2000, 2000, N=1, d_model=d, d_ff=128, h=4)
    for model in (page, package):
        table = model.generator.proj.weight
        assert table is model.src_embed[0].lut.weight
        assert abs(table.std().item() - d ** -0.5) < 0.02 * d ** -0.5  # N(0, 1/d_model)
        attn = model.encoder.layers[0].self_attn
        three = (6 / (d + 3 * d)) ** 0.5  # Glorot with n_out = 3 d_model
        for w in (attn.w_q.weight, attn.w_k.weight, attn.w_v.weight):
            assert three * 0.95 < w.abs().max().item() <= three
        assert three < attn.w_o.weight.abs().max().item() <= (6 / (2 * d)) ** 0.5  # square
