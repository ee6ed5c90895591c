"""Chapter 23: the path lengths of Table 1, counted by `path_length`, and the benchmark that measures the layers.

The counts must follow the table's formulas (1, n, n/k for contiguous and log_k n for dilated convolutions) for every
n and k checked; the benchmark's `--tiny` mode must write a record with every layer at every length."""
import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from annotated_transformer.why_self_attention import KINDS, path_length, reads

ROOT = Path(__file__).resolve().parents[1]


def ceil_log(n: int, k: int) -> int:
    "The smallest L with k**L >= n."
    L = 0
    while k**L < n:
        L += 1
    return L


@pytest.mark.parametrize("k", [2, 3, 5])
def test_path_lengths_follow_table_1(k):
    for n in range(2, 80):
        assert path_length("self-attention", n, k) == 1
        assert path_length("recurrent", n, k) == n  # into the first state, then n-1 steps
        assert path_length("convolution", n, k) == math.ceil((n - 1) / (k - 1))
        assert path_length("dilated convolution", n, k) == ceil_log(n, k)


def test_a_single_position_is_one_layer_away():
    assert all(path_length(kind, 1) == 1 for kind in KINDS)


def test_connections_are_causal_and_dilated_by_layer():
    assert reads("convolution", 5, k=3)[4] == [4, 3, 2] and reads("convolution", 5, k=3)[0] == [0]
    assert reads("dilated convolution", 20, layer=3, k=3)[19] == [19, 10, 1]  # gaps of 3**2
    assert reads("self-attention", 4)[2] == [0, 1, 2, 3] and reads("recurrent", 4)[2] == [2]
    with pytest.raises(ValueError, match="unknown kind"):
        reads("transformer", 4)


def test_a_function_of_connections_and_a_recurrence_flag():
    "Any connections work; a recurrence inside the layer shortens nothing that attention already connects."
    window = lambda n, layer: [list(range(max(0, i - 2), min(n, i + 3))) for i in range(n)]
    assert [path_length(window, n) for n in (2, 3, 10, 11)] == [1, 1, 5, 5]
    assert path_length("self-attention", 9, recurrent=True) == 1
    assert path_length(lambda n, layer: [[i] for i in range(n)], 6, recurrent=True) == 6


def test_unreachable_positions_raise():
    alone = lambda n, layer: [[i] for i in range(n)]  # no layer mixes positions
    with pytest.raises(ValueError, match="not reached"):
        path_length(alone, 3, max_layers=5)


def _bench():
    spec = importlib.util.spec_from_file_location("why_self_attention_bench", ROOT / "bench" / "why_self_attention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tiny_benchmark_writes_a_whole_record(tmp_path):
    import torch
    threads = torch.get_num_threads()
    out = tmp_path / "record.json"
    try:
        record = _bench().main(["--tiny", "--out", str(out)])
    finally:
        torch.set_num_threads(threads)
    assert json.loads(out.read_text()) == json.loads(json.dumps(record))
    layers = ("attention", "attention_fused", "lstm", "gru", "conv")
    assert set(record["layers"]) == set(layers) and record["lengths"] == [8, 16, 32]
    assert sorted((r["layer"], r["n"]) for r in record["rows"]) == sorted(
        (name, n) for name in layers for n in record["lengths"])
    for r in record["rows"]:
        assert r["cpu_s"] > 0 and r["wall_s"] > 0 and r["saved_bytes"] > 0 and r["repeats"] == 1
    assert isinstance(record["changed_files"], list)  # the paths that differed from the commit (none: clean)
    assert (record["changed_files"] == []) == ("uncommitted" not in record["commit"])
    for key in ("command", "commit", "date", "device", "torch", "threads", "load_average_at_end"):
        assert record[key] is not None, key
    assert record["command"].startswith("python bench/why_self_attention.py --tiny")
    saved = {(r["layer"], r["n"]): r["saved_bytes"] for r in record["rows"]}
    # the explicit attention keeps its n x n weights: doubling n more than doubles what it saves
    assert saved["attention", 32] > 2.5 * saved["attention", 16]
    assert saved["lstm", 32] <= 2.1 * saved["lstm", 16]


def test_saved_bytes_counts_each_storage_once_and_leaves_out_the_weights():
    import torch
    bench = _bench()
    conv = bench.make_layer("conv", d=8, k=3)
    x = torch.randn(2, 10, 8, requires_grad=True)
    # Conv1d saves its input (the transposed view of x: the storage of x, 2*10*8 floats) and its weight (left out)
    assert bench.saved_bytes(conv, x) == 2 * 10 * 8 * 4
    attn = bench.make_layer("attention", d=8, h=2)
    n = 10
    x = torch.randn(1, n, 8, requires_grad=True)
    # at least the softmax weights of both heads, (1, 2, n, n) floats
    assert bench.saved_bytes(attn, x) >= 2 * n * n * 4
