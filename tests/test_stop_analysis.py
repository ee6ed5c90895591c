"""bench/stop_analysis.py (chapter 24, "Where do the models stop?"): its bookkeeping on a model whose probabilities
are set by hand, and both programs' real models read end to end (tiny, on the fixture files)."""
import importlib.util
import json
import math
from functools import partial
import subprocess
import sys
from pathlib import Path

import torch

from conftest import subprocess_env

REPO = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SA = _load("stop_analysis")
PAD, BOS, EOS, COMMA, WORD = 0, 1, 2, 3, 4
PIECES = {PAD: "<pad>", BOS: "<s>", EOS: "</s>", COMMA: ",", WORD: "▁word"}


close = partial(math.isclose, rel_tol=1e-6)  # float32 probabilities


def test_analyse_reads_the_probabilities_it_is_given():
    """EOS gets 0.9 where the reference ends, 0.6 after a comma (then it is the top piece) and 0.01 elsewhere."""
    def log_probs(src, tgt_in):
        B, T = tgt_in.shape
        lengths = (tgt_in != PAD).sum(1) - 1  # pieces after BOS
        p_eos = torch.full((B, T), 0.01)
        p_eos[tgt_in == COMMA] = 0.6
        p_eos[torch.arange(B), lengths] = 0.9
        probs = torch.zeros(B, T, len(PIECES))
        probs[..., EOS], probs[..., WORD] = p_eos, 1 - p_eos
        return probs.clamp_min(1e-12).log()
    ids = [([WORD], [WORD, WORD, WORD]), ([WORD, WORD], [WORD, COMMA, WORD, WORD])]
    pairs = [("x", "a b c d"), ("y", "e f g h")]
    hyps = ["a", "e f g h e f g h e f"]  # under half; repeats itself and runs past 1.5 times
    r = SA.analyse(log_probs, lambda sources: hyps, PIECES.get, ids, pairs, (PAD, BOS, EOS), torch.device("cpu"))
    assert close(r["p_eos_at_end"], 0.9)
    inside = [0.01, 0.01, 0.01] + [0.01, 0.01, 0.6, 0.01]  # the second sentence: after its comma, EOS gets 0.6
    assert close(r["p_eos_inside"], sum(inside) / len(inside))
    assert close(r["p_eos_after_clause_end"], 0.6) and r["positions_after_clause_end"] == 1
    assert close(r["p_eos_after_other"], 0.01)
    assert close(r["eos_top_inside_share"], 1 / 7) and r["sentences_with_early_eos_top"] == 0.5
    g = r["greedy_dev"]
    assert (g["under_half"], g["over_one_and_a_half"], g["repeating"]) == (0.5, 0.5, 0.5)
    assert close(g["length_ratio"], 11 / 8) and close(g["length_ratio_without_repeating"], 1 / 4)
    assert g["shortest"][0]["hypothesis"] == "a" and g["longest"][-1]["hypothesis"] == hyps[1]


def _run(*args):
    proc = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=subprocess_env(), cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_both_programs_models_are_read_end_to_end(tmp_path):
    loop = tmp_path / "loop"
    _run(REPO / "bench" / "reference_loop.py", "--train", FIX / "de_en_train.tsv", "--dev", FIX / "dev.tsv",
         "--out", loop, "--steps", "3", "--eval-every", "3", "--vocab", "120", "--d-model", "32", "--heads", "2",
         "--layers", "1", "--d-ff", "64", "--max-tokens", "200", "--warmup", "10", "--save-model")
    package = tmp_path / "package"
    spec = f"spec=tsv:{FIX / 'de_en_train.tsv'};{FIX / 'dev.tsv'};{FIX / 'test.tsv'}"
    _run("-m", "annotated_transformer.cli", "train", "--data", "corpus", "--data-option", spec, "--data-option",
         "vocab_size=350", "--N", "1", "--d-model", "32", "--h", "2", "--d-ff", "64", "--warmup", "10",
         "--max-tokens", "200", "--steps", "3", "--checkpoint-every", "0", "--threads", "1", "--no-progress",
         "--out", package)
    dev = len((FIX / "dev.tsv").read_text(encoding="utf-8").splitlines())
    for program, args in (("loop", ["--loop", loop, "--dev", FIX / "dev.tsv"]), ("package", ["--package", package])):
        _run(REPO / "bench" / "stop_analysis.py", *args, "--out", tmp_path / f"{program}.json")
        r = json.loads((tmp_path / f"{program}.json").read_text(encoding="utf-8"))
        assert r["program"] == program and r["dev_sentences"] == dev
        assert 0 < r["p_eos_at_end"] < 1 and 0 < r["p_eos_inside"] < 1 and len(r["p_eos_inside_by_quarter"]) == 4
        assert 0 <= r["greedy_dev"]["repeating"] <= 1 and r["greedy_dev"]["length_ratio"] >= 0


def test_a_patched_package_model_is_read_with_its_patches(tmp_path):
    "A run of bench/ablate_model.py builds another model (final LayerNorms, no output bias): --ablate rebuilds it."
    patches = "zero_attn_bias+final_norm+no_generator_bias+torch_ce"
    run = tmp_path / "patched"
    spec = f"spec=tsv:{FIX / 'de_en_train.tsv'};{FIX / 'dev.tsv'};{FIX / 'test.tsv'}"
    _run(REPO / "bench" / "ablate_model.py", patches, "train", "--data", "corpus", "--data-option", spec,
         "--data-option", "vocab_size=350", "--N", "1", "--d-model", "32", "--h", "2", "--d-ff", "64",
         "--warmup", "10", "--max-tokens", "200", "--steps", "3", "--checkpoint-every", "0", "--threads", "1",
         "--no-progress", "--out", run)
    _run(REPO / "bench" / "stop_analysis.py", "--package", run, "--ablate", patches, "--out", tmp_path / "s.json")
    r = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert r["ablate"] == patches and r["program"] == "package" and 0 < r["p_eos_at_end"] < 1
    plain = subprocess.run([sys.executable, str(REPO / "bench" / "stop_analysis.py"), "--package", str(run), "--out",
                            str(tmp_path / "x.json")], capture_output=True, text=True, env=subprocess_env(), cwd=REPO)
    assert plain.returncode != 0 and not (tmp_path / "x.json").exists()  # the unpatched model cannot take its weights


def test_bad_input_gets_one_line(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "stop_analysis.py"), "--loop", str(tmp_path),
                           "--out", str(tmp_path / "x.json")], capture_output=True, text=True, env=subprocess_env())
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].endswith("--loop needs --dev DEV.tsv")
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "stop_analysis.py"), "--package",
                           str(tmp_path / "missing"), "--out", str(tmp_path / "x.json")],
                          capture_output=True, text=True, env=subprocess_env())
    assert proc.returncode == 2 and "missing: no such file or directory" in proc.stderr.strip().splitlines()[-1]
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "stop_analysis.py"), "--package", str(tmp_path),
                           "--ablate", "final_norm+no_such", "--out", str(tmp_path / "x.json")],
                          capture_output=True, text=True, env=subprocess_env())
    assert proc.returncode == 2 and "--ablate: unknown variant 'no_such'" in proc.stderr.strip().splitlines()[-1]
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "stop_analysis.py"), "--loop", str(tmp_path), "--dev",
                           str(FIX / "dev.tsv"), "--ablate", "final_norm", "--out", str(tmp_path / "x.json")],
                          capture_output=True, text=True, env=subprocess_env())
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].endswith("give --package RUN")
