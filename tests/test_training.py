"""Tests for the training rooms (chapters 09, 16, 19: loss, train_config, trainer): label smoothing, schedule, the training
loop, exact resume, DDP equivalence on CPU, and the copy task."""
import contextlib
import dataclasses
import math
import random

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.testing import assert_close

from annotated_transformer.batching import EOS, PAD
from annotated_transformer.sampler import get_data_builder, make_batch, with_empty_rows
from annotated_transformer.checkpoint import checkpoint_path, find_checkpoint, list_checkpoints
from annotated_transformer.model import TransformerConfig, make_model, make_model_from_config
from torch import nn
from annotated_transformer.copytask import copy_accuracy, copy_task_pairs, greedy_decode_simple, strip_special
from annotated_transformer.train_config import ARCHS, build_model, model_config_dict
from annotated_transformer.loss import LabelSmoothingLoss, make_optimizer, rate
from annotated_transformer.trainer import Trainer
from annotated_transformer.train_config import TrainConfig
from annotated_transformer.checkpoint import load_model


# (one torch thread per worker: tests/conftest.py)


COPY_VOCAB, COPY_LEN = 11, 8  # the copy task of these tests


def small_cfg(**overrides) -> TrainConfig:
    "A small copy-task config; overrides may name TrainConfig fields or TransformerConfig fields (the model's)."
    model_fields = {f.name for f in dataclasses.fields(TransformerConfig)}
    model = dict(N=1, d_model=32, h=2, d_ff=64, dropout=0.1, share_embeddings=True)
    model.update({k: v for k, v in overrides.items() if k in model_fields})
    base = dict(warmup=20, max_tokens=200, steps=6, log_every=1, eval_every=0, checkpoint_every=0, device="cpu",
                progress=False)
    base.update({k: v for k, v in overrides.items() if k not in model_fields})
    return TrainConfig(model=TransformerConfig(**model), **base)


def small_trainer(seed=0, pairs=None, dtype=torch.float32, out_dir=None, **overrides) -> Trainer:
    cfg = small_cfg(**overrides)
    torch.manual_seed(seed)
    mc = dataclasses.replace(cfg.model, src_vocab=COPY_VOCAB, tgt_vocab=COPY_VOCAB)
    model = make_model_from_config(mc).to(dtype)
    pairs = copy_task_pairs(300, COPY_VOCAB, COPY_LEN, seed=0) if pairs is None else pairs
    return Trainer(model, pairs, cfg, out_dir=out_dir)


# ---- label smoothing -----------------------------------------------------------------------------
@pytest.mark.parametrize("V,eps,pad", [(5, 0.1, 0), (37, 0.1, 0), (37, 0.3, 4), (1000, 0.1, 0), (12, 0.0, 0)])
def test_label_smoothing_against_cross_entropy(V, eps, pad):
    g = torch.Generator().manual_seed(V)
    logits = torch.randn(64, V, dtype=torch.float64, generator=g) * 3
    y = torch.randint(0, V, (64,), generator=g)
    y[::7] = pad
    logp = logits.log_softmax(-1)
    ours = LabelSmoothingLoss(V, pad, eps, reduction="none")(logp, y)
    # F.cross_entropy gives eps'/V to every class; eps' = eps*V/(V-2) makes that eps/(V-2), our share of each
    # non-label class. The rest: PyTorch puts one share on PAD, we put it on the label.
    theirs = F.cross_entropy(logits, y, label_smoothing=eps * V / (V - 2), ignore_index=pad, reduction="none")
    correction = eps / (V - 2) * (logp[:, pad] - logp.gather(1, y[:, None]).squeeze(1))
    expected = (theirs + correction).masked_fill(y == pad, 0.0)
    assert_close(ours, expected, rtol=1e-12, atol=1e-12)
    # the "mean" reduction averages over non-PAD labels, like F.cross_entropy's mean with ignore_index
    assert_close(LabelSmoothingLoss(V, pad, eps)(logp, y), expected.sum() / (y != pad).sum(), rtol=1e-12, atol=0)
    if eps == 0:
        assert_close(ours.sum(), F.nll_loss(logp, y, ignore_index=pad, reduction="sum"), rtol=1e-12, atol=0)


def test_label_smoothing_equals_soft_target_cross_entropy_and_gradients():
    V, eps = 9, 0.1
    crit = LabelSmoothingLoss(V, PAD, eps, reduction="sum")
    logits = torch.randn(3, 7, V, dtype=torch.float64, requires_grad=True)
    y = torch.randint(1, V, (3, 7))
    y[0, 5:] = PAD
    q = crit.target_distribution(y, dtype=torch.float64)
    assert (q[..., PAD] == 0).all() and (q[y == PAD] == 0).all()  # PAD gets no mass; PAD labels no target
    assert_close(q[y != PAD].sum(-1), torch.ones(int((y != PAD).sum()), dtype=torch.float64))
    assert_close(q.max(-1).values[y != PAD], torch.full((int((y != PAD).sum()),), 1 - eps, dtype=torch.float64))
    ours = crit(logits.log_softmax(-1), y)
    soft = F.cross_entropy(logits.reshape(-1, V), q.reshape(-1, V), reduction="none").sum()  # soft targets
    assert_close(ours, soft, rtol=1e-12, atol=1e-12)
    g1, = torch.autograd.grad(ours, logits)
    g2, = torch.autograd.grad(soft, logits)
    assert_close(g1, g2, rtol=1e-10, atol=1e-12)
    assert (g1[0, 5:] == 0).all()  # PAD positions contribute nothing


def test_label_smoothing_is_finite_for_confident_predictions_and_checks_input():
    V = 10
    logits = torch.full((1, V), -1e4)
    logits[0, 3] = 1e4  # log p of the others underflows to about -2e4, still finite
    loss = LabelSmoothingLoss(V)(logits.log_softmax(-1), torch.tensor([3]))
    assert torch.isfinite(loss)
    with pytest.raises(ValueError, match="smoothing must be in"):
        LabelSmoothingLoss(V, smoothing=1.0)
    with pytest.raises(ValueError, match="11 classes"):
        LabelSmoothingLoss(V)(torch.zeros(2, 11), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="reduction"):
        LabelSmoothingLoss(V, reduction="avg")


# ---- schedule ------------------------------------------------------------------------------------
@pytest.mark.parametrize("d_model,warmup,factor", [(512, 4000, 1.0), (256, 4000, 1.0), (1024, 8000, 2.0), (64, 1, 0.5)])
def test_rate_matches_the_formula(d_model, warmup, factor):
    for step in [1, 2, 10, warmup - 1, warmup, warmup + 1, 10 * warmup, 100_000]:
        if step < 1:
            continue
        expected = factor * d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)
        assert math.isclose(rate(step, d_model, warmup, factor), expected, rel_tol=1e-12)
    peak = rate(warmup, d_model, warmup, factor)
    assert math.isclose(peak, factor * (d_model * warmup) ** -0.5, rel_tol=1e-12)
    assert peak == max(rate(s, d_model, warmup, factor) for s in range(1, 3 * warmup + 2))
    assert rate(0, d_model, warmup, factor) == 0.0


def test_rate_errors_and_lambda_lr_uses_update_number():
    with pytest.raises(ValueError, match="step must be >= 0"):
        rate(-1, 512, 4000)
    with pytest.raises(ValueError, match="must be positive"):
        rate(1, 512, 0)
    opt, sched = make_optimizer(torch.nn.Linear(2, 2), d_model=512, warmup=10)
    assert opt.defaults["betas"] == (0.9, 0.98) and opt.defaults["eps"] == 1e-9
    used = []
    for _ in range(15):
        used.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert used == [rate(k, 512, 10) for k in range(1, 16)]  # update k uses rate(k): no repeated step


# ---- configuration -------------------------------------------------------------------------------
@pytest.mark.parametrize("values,message", [
    ({"d_modle": 512}, "unknown key 'd_modle' in config; did you mean 'd_model'"),
    ({"model": {"d_model": 500}}, "d_model=500 is not divisible by h=8"),
    ({"steps": -5}, "steps=-5 must be >= 0"),
    ({"model": {"N": 0}}, "N must be >= 1, got 0"),
    ({"layers": 0}, "TrainConfig key 'layers' was removed in annotated-transformer 0.3.0: write model.N"),  # typed
    ({"layers": 1, "model": {"N": 6}}, "layers=1 and model.N=6 in config disagree"),
    ({"model": {"N": 2.5}}, "N must be an int, got float"),
    ({"model": {"share_embeddings": 1}}, "share_embeddings must be True or False"),
    ({"model": {"dropout": 1.5}}, r"dropout must be in \[0, 1\), got 1.5"),
    ({"label_smoothing": 1.5}, r"label_smoothing=1.5 must be in \[0, 1\)"),
    ({"amp": "fp8"}, "amp must be auto, bf16 or off"),
])
def test_bad_configs_are_named(values, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig.from_dict(values)


def test_copy_task_settings_are_data_options_and_old_keys_still_load():
    # as a run config file of an earlier release holds them (files load without a warning)
    old = TrainConfig.from_dict({"copy_vocab": 9, "copy_len": 5, "copy_train_size": 50, "copy_dev_size": 5},
                                warn=False)
    assert old.data == "copy" and old.data_options == {"vocab": 9, "max_length": 5, "train_size": 50, "dev_size": 5}
    data = get_data_builder("copy")(old)
    assert (data.src_vocab, len(data.train), len(data.dev)) == (9, 50, 5)
    assert max(len(s) for s, _ in data.train) <= 5
    corpus = TrainConfig.from_dict({"data": "corpus", "copy_vocab": 11, "data_options": {"spec": "tatoeba"}},
                                   warn=False)
    assert corpus.data_options == {"spec": "tatoeba"}  # a corpus run of before: its unused copy settings are dropped
    with pytest.raises(ValueError, match="must be >= 4, got 3"):
        get_data_builder("copy")(TrainConfig.from_dict({"copy_vocab": 3}, warn=False))
    with pytest.raises(ValueError, match="unknown data option 'len'"):
        get_data_builder("copy")(TrainConfig(data_options={"len": 3}))


def test_share_embeddings_with_two_vocabularies_ties_the_target_side():
    two = dataclasses.replace(TrainConfig().model, src_vocab=100, tgt_vocab=200)
    assert two.tied == ("target embedding", "pre-softmax projection")
    untied = TrainConfig.from_dict({"model": {"share_embeddings": False}}).model
    assert dataclasses.replace(untied, src_vocab=100, tgt_vocab=200).tied == ()


def test_train_config_holds_one_model_config_and_reads_old_flat_settings():
    cfg = TrainConfig.from_dict({"model": {"N": 2, "h": 4, "d_model": 64, "positional": "learned"}, "steps": 7})
    assert cfg.model == TransformerConfig(N=2, h=4, d_model=64, positional="learned", share_embeddings=True)
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg and "src_vocab" not in cfg.to_dict()["model"]
    old = TrainConfig.from_dict({"layers": 3, "heads": 4, "d_model": 256, "d_ff": 1024, "max_len": 512,
                                 "share_embeddings": False, "steps": 7}, warn=False)  # what checkpoints stored
    assert (old.model.N, old.model.h, old.model.max_positions, old.model.share_embeddings) == (3, 4, 512, False)
    for values, message in [({"model": {"src_vocab": 5}}, "the vocabulary sizes come from the data"),
                            ({"model": {"init": "zeros"}}, "init must be one of default, harvard"),
                            ({"model": {"share_embeddings": "yes"}}, "share_embeddings must be True or False"),
                            ({"model": 3}, "must be an object of TransformerConfig fields")]:
        with pytest.raises(ValueError, match=message):
            TrainConfig.from_dict(values)
    assert TrainConfig(model=TransformerConfig(9, 9)).validate().model.tgt_vocab == 9  # a model's own config


def test_a_train_config_holding_the_models_config_trains_it_and_nothing_is_replaced_in_silence():
    "TrainConfig(model=cfg) with the config the model was built from is kept; another one is an error (issue 61)."
    mc = TransformerConfig(COPY_VOCAB, COPY_VOCAB, N=1, d_model=32, h=2, d_ff=64)
    model = make_model_from_config(mc)
    pairs = copy_task_pairs(50, COPY_VOCAB, COPY_LEN, seed=0)
    base = dict(steps=1, device="cpu", progress=False, eval_every=0, checkpoint_every=0)
    assert Trainer(model, pairs, TrainConfig(model=mc, **base)).cfg.model == mc  # vocabularies included
    assert Trainer(model, pairs, TrainConfig(**base)).cfg.model == mc  # left at its default: the model's own
    unset = TransformerConfig()
    no_vocab = dataclasses.replace(mc, src_vocab=unset.src_vocab, tgt_vocab=unset.tgt_vocab)
    assert Trainer(model, pairs, TrainConfig(model=no_vocab, **base)).cfg.model == mc  # sizes from the model
    for other, message in [(dataclasses.replace(mc, N=2), r"N=2 \(the model's: 1\)"),
                           (dataclasses.replace(mc, dropout=0.3), r"dropout=0.3 \(the model's: 0.1\)"),
                           (dataclasses.replace(mc, src_vocab=12, tgt_vocab=12), r"src_vocab=12 \(the model's: 11\)")]:
        with pytest.raises(ValueError, match="cfg.model is not the configuration of the model being trained: "
                                             + message):
            Trainer(model, pairs, TrainConfig(model=other, **base))
    with pytest.raises(ValueError, match="cfg.arch='torch' but the model is 'ours'"):
        Trainer(model, pairs, TrainConfig(model=mc, arch="torch", **base))


def test_build_model_and_checkpoint_dicts_round_trip():
    mc = TransformerConfig(20, 20, N=1, d_model=16, d_ff=32, h=2, positional="learned", init="harvard")
    for arch in ARCHS:
        model = build_model(mc, arch)
        stored = model_config_dict(model)
        assert stored.get("arch", "ours") == arch and build_model(stored).config == mc
    legacy = {k: v for k, v in mc.to_dict().items() if k not in ("positional", "init", "max_positions")}
    assert build_model({**legacy, "max_len": 64}).config.max_positions == 64  # a checkpoint from before the rename
    with pytest.raises(ValueError, match="carries no TransformerConfig"):
        model_config_dict(nn.Linear(2, 2))


# ---- the training loop ---------------------------------------------------------------------------
def test_nan_loss_stops_with_the_step():
    tr = small_trainer()
    tr.fit(2)
    with torch.no_grad():
        next(tr.model.parameters()).fill_(float("nan"))
    before = [p.detach().clone() for p in tr.model.parameters()]
    # without a mask, PyTorch's fused CPU kernel turns NaN queries into zeros (torch 2.13), so the loss can stay
    # finite while the gradients are NaN: either check must stop the run before the update
    with pytest.raises(FloatingPointError, match="(loss|gradient norm) became nan at step 3"):
        tr.fit(5)
    assert tr.step == 2  # no update was made
    assert all(torch.equal(a, b) or (a.isnan().all() and b.isnan().all()) for a, b in zip(before, tr.model.parameters()))


def test_loss_is_mean_over_global_tokens_with_accumulation():
    "With accum_steps=2 the step's loss is the token-weighted mean over both micro-batches."
    tr = small_trainer(dropout=0.0, accum_steps=2, dtype=torch.float64)
    batches = tr.next_batches()
    crit = LabelSmoothingLoss(11, PAD, 0.1, reduction="sum")
    tr.model.eval()  # (dropout is 0 anyway)
    with torch.no_grad():
        total = n = 0
        for idx in batches:
            b = make_batch([tr.pairs[i] for i in idx])
            total += float(crit(tr.model.generator(tr.model(b.src, b.tgt_in, b.src_mask, b.tgt_mask)), b.tgt_out))
            n += b.ntokens
    record = tr.train_step(batches)
    assert math.isclose(record["loss"], total / n, rel_tol=1e-12)
    assert record["tgt_tokens"] == n


def test_evaluate_and_metrics_file(tmp_path):
    tr = small_trainer(out_dir=tmp_path, eval_every=3, log_every=2, steps=6)
    tr.dev_pairs = copy_task_pairs(50, 11, 8, seed=5)
    tr.fit()
    import json
    lines = [json.loads(l) for l in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in lines if "loss" in r] == [2, 4, 6]
    assert [r["step"] for r in lines if "dev_loss" in r] == [3, 6]
    for r in lines:
        if "loss" in r:
            assert {"nll", "ppl", "lr", "grad_norm", "tokens_per_s", "epoch"} <= set(r)
    assert list_checkpoints(tmp_path) == [checkpoint_path(tmp_path, 6)]  # the final checkpoint


# ---- checkpoints ---------------------------------------------------------------------------------
def test_resume_is_exact(tmp_path):
    "k steps, save, m more steps == reload into a fresh process state + m steps: losses and weights bit-equal."
    pairs = copy_task_pairs(120, 11, 8, seed=0)  # small: the run crosses epoch boundaries
    a = small_trainer(seed=0, pairs=pairs, accum_steps=2, clip_norm=1.0)
    a.fit(4)
    a.save(tmp_path / "k.pt")
    expected = [r["loss"] for r in a.fit(10)[4:]]
    assert a.sampler.epoch >= 1
    torch.manual_seed(999)
    random.random()
    b = small_trainer(seed=7, pairs=pairs, accum_steps=2, clip_norm=1.0)  # different initial weights
    b.load(tmp_path / "k.pt")
    assert b.step == 4
    got = [r["loss"] for r in b.fit(10)]
    assert got == expected
    for (name, p), q in zip(a.model.named_parameters(), b.model.parameters()):
        assert torch.equal(p, q), name
    sa, sb = a.optimizer.state_dict(), b.optimizer.state_dict()
    for k in sa["state"]:
        assert torch.equal(sa["state"][k]["exp_avg_sq"], sb["state"][k]["exp_avg_sq"])
    assert a.scheduler.state_dict()["last_epoch"] == b.scheduler.state_dict()["last_epoch"] == 10



def test_a_run_repeats_whatever_the_global_random_state():
    "The same model and cfg.seed: the same losses after torch.manual_seed(1) or (2); the global generators stay put."
    pairs = copy_task_pairs(300, COPY_VOCAB, COPY_LEN, seed=0)
    cfg = small_cfg(steps=4, dropout=0.1)
    mc = dataclasses.replace(cfg.model, src_vocab=COPY_VOCAB, tgt_vocab=COPY_VOCAB)

    def losses(global_seed, run_seed=0):
        torch.manual_seed(0)
        model = make_model_from_config(mc)  # the initial weights are the caller's: the same each time
        torch.manual_seed(global_seed)
        before = torch.get_rng_state()
        history = Trainer(model, pairs, dataclasses.replace(cfg, seed=run_seed)).fit()
        assert torch.equal(torch.get_rng_state(), before)  # training drew from the run's own generators
        return [r["loss"] for r in history]

    assert losses(1) == losses(2)
    assert losses(1) != losses(1, run_seed=1)  # ... and cfg.seed does choose the dropout masks (and the batches)


@pytest.mark.parametrize("arch", ["ours", "torch"])
def test_a_checkpoint_records_the_model_that_was_trained(tmp_path, arch):
    "A Trainer run from Python with TrainConfig's default model (the base model) records the model it trained."
    import annotated_transformer.torch_compare  # registers arch "torch"
    mc = TransformerConfig(COPY_VOCAB, COPY_VOCAB, N=1, d_model=32, h=2, d_ff=64, dropout=0.0)
    torch.manual_seed(0)
    model = build_model(mc, arch)
    cfg = TrainConfig(warmup=10, max_tokens=200, steps=2, log_every=1, eval_every=0, device="cpu", progress=False)
    assert cfg.model.d_model == 512 and cfg.model.N == 6  # the paper's base model: not what is trained here
    trainer = Trainer(model, copy_task_pairs(50, COPY_VOCAB, COPY_LEN, seed=0), cfg, out_dir=tmp_path)
    trainer.fit()
    ckpt = torch.load(find_checkpoint(tmp_path), weights_only=True)
    recorded = ckpt["train_config"]
    assert recorded["arch"] == arch == ckpt["model_config"].get("arch", "ours")
    assert recorded["model"] == {k: v for k, v in ckpt["model_config"].items() if k not in ("src_vocab", "tgt_vocab", "arch")}
    assert (recorded["model"]["N"], recorded["model"]["d_model"]) == (1, 32)
    # the record is a valid training config, and rebuilds the model that was trained
    again = TrainConfig.from_dict(recorded)
    assert dataclasses.replace(again.model, src_vocab=COPY_VOCAB, tgt_vocab=COPY_VOCAB) == mc
    assert trainer.cfg.to_dict() == recorded and cfg.model.d_model == 512  # the caller's cfg is left as it was

def test_checkpoint_contents_are_plain(tmp_path):
    tr = small_trainer(out_dir=tmp_path, keep_last=2, checkpoint_every=2, steps=8)
    tr.fit()
    assert [p.name for p in list_checkpoints(tmp_path)] == ["step_000006.pt", "step_000008.pt"]  # keep_last=2
    ck = torch.load(find_checkpoint(tmp_path), weights_only=True)  # loads with the restricted unpickler
    assert ck["step"] == 8 and ck["sampler"]["position"] >= 0
    assert set(ck["rng"][0]) >= {"python", "numpy", "torch"}
    assert ck["model_config"] == tr.model_config and ck["train_config"]["model"]["d_model"] == 32
    model = load_model(tmp_path, device="cpu")
    assert not model.training
    b = make_batch(copy_task_pairs(4, 11, 8, seed=9))
    tr.model.eval()
    with torch.no_grad():
        assert torch.equal(model(b.src, b.tgt_in, b.src_mask, b.tgt_mask), tr.model(b.src, b.tgt_in, b.src_mask, b.tgt_mask))
    with pytest.raises(FileNotFoundError, match="no such checkpoint"):
        find_checkpoint(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no checkpoints"):
        load_model(tmp_path / "empty")
    assert find_checkpoint(tmp_path / "checkpoints") == checkpoint_path(tmp_path, 8)  # the folder itself works too


# ---- distributed data parallel -------------------------------------------------------------------
STEPS = 4


def _ddp_worker(rank, world, tmp):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=rank, world_size=world)
    try:
        tr = small_trainer(seed=rank, dtype=torch.float64, dropout=0.0, accum_steps=2, max_tokens=120)
        history = tr.fit(STEPS)
        if rank == 0:
            torch.save({"loss": [r["loss"] for r in history], "nll": [r["nll"] for r in history],
                        "params": [p.detach() for p in tr.model.parameters()]}, f"{tmp}/ddp.pt")
    finally:
        dist.destroy_process_group()


def test_ddp_on_cpu_matches_single_process(tmp_path):
    "Two gloo processes, each with half of every global batch, make the same updates as one process."
    mp.spawn(_ddp_worker, args=(2, str(tmp_path)), nprocs=2, join=True)
    ddp = torch.load(tmp_path / "ddp.pt", weights_only=True)
    single = small_trainer(seed=0, dtype=torch.float64, dropout=0.0, accum_steps=2, max_tokens=120)
    history = single.fit(STEPS)
    assert_close(ddp["loss"], [r["loss"] for r in history], rtol=1e-12, atol=1e-12)
    assert_close(ddp["nll"], [r["nll"] for r in history], rtol=1e-12, atol=1e-12)
    for p, q in zip(ddp["params"], single.model.parameters()):
        assert_close(p, q.detach(), rtol=1e-9, atol=1e-10)
    # and the parameters did move: the comparison is not between two untouched models
    torch.manual_seed(0)
    fresh = make_model(**single.model_config).double()
    assert max((p - q).abs().max() for p, q in zip(ddp["params"], fresh.parameters())) > 1e-3


def _ddp_stop_worker(rank, world, tmp):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=rank, world_size=world)
    try:
        tr = small_trainer(seed=0, out_dir=f"{tmp}/run", steps=8, checkpoint_every=0)
        tr.fit(stop=lambda: 15 if rank == 1 and tr.step == 3 else 0)  # only rank 1 is asked to stop (SIGTERM)
        torch.save({"step": tr.step, "stopped": tr.stopped}, f"{tmp}/rank{rank}.pt")
    finally:
        dist.destroy_process_group()


def test_ddp_ranks_stop_after_the_same_update(tmp_path):
    "A stop asked of one rank stops every rank after the same update; rank 0 writes that update's checkpoint."
    mp.spawn(_ddp_stop_worker, args=(2, str(tmp_path)), nprocs=2, join=True)
    for rank in (0, 1):
        assert torch.load(tmp_path / f"rank{rank}.pt", weights_only=True) == {"step": 3, "stopped": 15}
    assert [p.name for p in list_checkpoints(tmp_path / "run")] == ["step_000003.pt"]
    ckpt = torch.load(tmp_path / "run" / "checkpoints" / "step_000003.pt", weights_only=True)
    assert ckpt["step"] == 3 and len(ckpt["rng"]) == 2  # both ranks' generators, gathered


# ---- the copy task -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def copy_model():
    cfg = TrainConfig(model=TransformerConfig(N=1, d_model=32, h=2, d_ff=64, dropout=0.0, share_embeddings=True),
                      label_smoothing=0.1, warmup=100,
                      lr_factor=1.0, max_tokens=600, steps=500, log_every=50, eval_every=0, device="cpu",
                      progress=False)
    torch.manual_seed(0)
    train = copy_task_pairs(5000, vocab=8, max_length=6, seed=0)
    test = copy_task_pairs(200, vocab=8, max_length=6, seed=1, exclude=train)
    mc = dataclasses.replace(cfg.model, src_vocab=8, tgt_vocab=8)
    model = make_model_from_config(mc)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    history = Trainer(model, train, cfg).fit()
    torch.set_num_threads(before)
    return model.eval(), history, test


def test_copy_task_converges(copy_model):
    model, history, test = copy_model
    assert history[-1]["loss"] < 0.5 * history[0]["loss"]
    assert copy_accuracy(model, test) >= 0.97


def test_greedy_decode_simple(copy_model):
    model, _, test = copy_model
    pairs = [([3, 4, 5, 6], [3, 4, 5, 6]), ([7], [7])]
    b = make_batch(pairs)
    out = greedy_decode_simple(model, b.src, b.src_mask, max_new_tokens=8)
    assert [strip_special(o) for o in out.tolist()] == [[3, 4, 5, 6], [7]]
    assert out[1].tolist()[:2] == [7, EOS] and set(out[1].tolist()[2:]) <= {PAD}  # PAD after EOS
    assert out.size(1) <= 8
    short = greedy_decode_simple(model, b.src, b.src_mask, max_new_tokens=2)
    assert short.shape == (2, 2)  # stops at max_new_tokens


def test_types_not_strings_a_new_optional_field_is_checked_and_gets_a_flag():
    "validate and the train command's parser read the fields' types, so a field typed `str | None` just works."
    from annotated_transformer.train_command import build_parser
    Noted = dataclasses.make_dataclass("Noted", [("note", "str | None", dataclasses.field(default=None))],
                                       bases=(TrainConfig,))
    Noted.__module__ = TrainConfig.__module__  # its annotations are read where TrainConfig's are
    assert Noted().validate().note is None and Noted(note="x").validate().note == "x"
    with pytest.raises(ValueError, match=r"note must be of type str \| None, got 3"):
        Noted(note=3).validate()
    args = build_parser(Noted).parse_args(["--note", "hello", "--steps", "5"])
    assert args.note == "hello" and args.steps == 5


@pytest.mark.parametrize("dropout,multiple,static", [(0.0, 1, False), (0.1, 1, False), (0.1, 8, False), (0.0, 8, True),
                                                    (0.1, 8, True)])
def test_trainer_makes_the_updates_of_the_plain_loop(dropout, multiple, static):
    """Chapter 19's Trainer and chapter 09's train_loop, on the trainer's own batches: the same losses and weights.
    The plain loop passes every batch's masks; the trainer passes no target mask (causal, in the kernel) and no source
    mask when a batch has no source padding, checks the ids on the host, and reads the device once per update. With
    static_shapes it fills every batch up with empty rows: without dropout the plain loop's batches stay as they are
    (no row sees another), with dropout they get the same rows (the same random draws)."""
    import itertools

    from annotated_transformer.sampler import TokenBatchSampler
    from annotated_transformer.loss import train_loop

    pairs = copy_task_pairs(300, 11, 8, seed=0)
    mc = TransformerConfig(11, 11, N=2, d_model=32, d_ff=64, h=4, dropout=dropout)
    cfg = TrainConfig(warmup=10, max_tokens=120, label_smoothing=0.1, steps=8, log_every=1, eval_every=0,
                      device="cpu", progress=False, pad_to_multiple=multiple, static_shapes=static)
    torch.set_default_dtype(torch.float64)  # rounding apart, the two must agree: compare where rounding is tiny
    try:
        torch.manual_seed(0)
        trainer = Trainer(make_model_from_config(mc), pairs, cfg)
        records = trainer.fit(8)
        torch.manual_seed(0)  # the same initial weights ...
        plain = make_model_from_config(mc)
        torch.manual_seed(cfg.seed)  # ... and the same dropout masks: the trainer's generators start at cfg.seed
        # the batches the trainer drew
        sampler = TokenBatchSampler(pairs, cfg.max_tokens, seed=cfg.seed, pad_to_multiple=multiple)
        plan = list(itertools.islice(sampler, 8))
        batches = [make_batch([pairs[i] for i in idx], pad_to_multiple=multiple) for idx in plan]
        if static and dropout:
            batches = [with_empty_rows(b, sampler.batch_rows(idx)) for b, idx in zip(batches, plan)]
        epoch = [trainer._micro_batch(idx) for idx in sampler.epoch_batches(0)]
        shapes = {(len(b), b.src.size(1), b.tgt_in.size(1)) for b in epoch}
        lengths = {(b.src.size(1), b.tgt_in.size(1)) for b in epoch}
        assert (len(shapes) == len(lengths)) == static or multiple == 1  # static: the lengths fix the shape
        assert multiple == 1 or all(b.src.size(1) % multiple == 0 for b in batches)
        # both of the trainer's paths were taken: batches without source padding (no mask) and with it
        unpadded = [b.src_ntokens == b.src.numel() for b in batches]
        assert (any(unpadded) or multiple > 1) and not all(unpadded), unpadded
        optimizer, scheduler = make_optimizer(plain, mc.d_model, cfg.warmup, cfg.lr_factor,
                                              (cfg.adam_beta1, cfg.adam_beta2), cfg.adam_eps)
        criterion = LabelSmoothingLoss(11, PAD, cfg.label_smoothing, reduction="sum")
        losses = train_loop(plain, batches, criterion, optimizer, scheduler)
    finally:
        torch.set_default_dtype(torch.float32)
    assert_close(losses, [r["loss"] for r in records], rtol=1e-10, atol=0)
    for (name, p), q in zip(plain.named_parameters(), trainer.model.parameters()):
        assert_close(p, q, rtol=1e-9, atol=1e-12, msg=name)
    assert losses[-1] < losses[0]  # it did train


@pytest.mark.parametrize("checked", [True, False])
def test_a_training_forward_and_backward_read_nothing_from_the_device(monkeypatch, checked):
    """What train_step runs between its host-side checks and its one read: no value comes back to the host (on a GPU,
    each read would make the host wait). Without token_ids_checked() the embeddings' vocabulary check reads the ids:
    the test sees that, so it can fail."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from annotated_transformer.checks import token_ids_checked

    tr = small_trainer(dropout=0.1)
    batch = tr._micro_batch(tr.next_batches()[0])
    inputs = tr._model_inputs(batch)
    reads = []

    class Reads(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in (torch.ops.aten._local_scalar_dense.default, torch.ops.aten.item.default):
                reads.append(str(func))
            return func(*args, **(kwargs or {}))

    for name in ("tolist", "item", "__bool__", "__int__", "__float__"):
        method = getattr(torch.Tensor, name)
        monkeypatch.setattr(torch.Tensor, name,
                            lambda self, *a, _n=name, _m=method, **k: (reads.append(_n), _m(self, *a, **k))[1])
    with Reads(), tr.autocast(), (token_ids_checked() if checked else contextlib.nullcontext()):
        loss, nll = tr.step_module(*inputs)
        (loss / batch.ntokens).backward()
    monkeypatch.undo()
    assert (reads == []) == checked, reads


def test_fused_adam_makes_the_same_updates():
    "make_optimizer(fused=True), the default on a GPU, against the default for-loop Adam: the same weights (float64)."
    models = []
    for fused in (False, True):
        model = small_trainer(dtype=torch.float64).model
        optimizer, scheduler = make_optimizer(model, 32, warmup=4, fused=fused)
        assert optimizer.defaults["fused"] is fused
        for step in range(3):
            optimizer.zero_grad()
            sum(p.square().sum() * (step + 1) for p in model.parameters()).backward()
            optimizer.step()
            scheduler.step()
        models.append(model)
    for p, q in zip(*(m.parameters() for m in models)):
        assert_close(p, q, rtol=1e-12, atol=1e-15)
    assert make_optimizer(nn.Linear(2, 2), 32)[0].defaults["fused"] is False  # on the CPU: not by default


def test_bf16_loss_from_logit_blocks_matches_the_log_softmax_path():
    """Under bf16 autocast the trainer's loss module takes the loss from the logits in blocks: chapter 09's values, and
    gradients as close to float32's as those of chapter 09's log_softmax path under bf16."""
    from annotated_transformer.trainer import LogitsSeq2SeqLoss, Seq2SeqLoss

    tr = small_trainer(dropout=0.0, amp="bf16")
    assert type(tr.loss_module) is LogitsSeq2SeqLoss
    inputs = tr._model_inputs(tr._micro_batch(tr.next_batches()[0]))
    tr.loss_module.block_elements = 5 * COPY_VOCAB  # blocks of 5 rows: several per batch
    results = []
    plain = Seq2SeqLoss(tr.model, tr.criterion)
    for module, amp in ((tr.loss_module, True), (plain, True), (plain, False)):
        tr.model.zero_grad()
        with tr.autocast() if amp else contextlib.nullcontext():
            loss, nll = module(*inputs)
        loss.backward()
        results.append((loss.detach(), nll.detach(), [p.grad.float() for p in tr.model.parameters()],
                        type(loss.grad_fn).__name__))
    (loss, nll, grads, fn), (ref_loss, ref_nll, ref_grads, ref_fn), (_, _, exact, _) = results
    assert "SmoothedLossFromLogits" in fn and "SmoothedLossFromLogits" not in ref_fn  # the blocks ran
    assert_close(loss, ref_loss, rtol=1e-4, atol=0)
    assert_close(nll, ref_nll, rtol=1e-4, atol=0)
    for g, ref, f32 in zip(grads, ref_grads, exact):
        assert (g - f32).norm() <= 1.5 * (ref - f32).norm() + 1e-7
    with torch.no_grad():  # and in float32 it is Seq2SeqLoss itself, to the bit
        assert torch.equal(torch.stack(tr.loss_module(*inputs)), torch.stack(plain(*inputs)))


def test_static_shapes_change_no_evaluation_and_the_memory_probe_sees_padded_lengths():
    "Empty rows change no held-out number; the largest batch (what the memory check probes) has the padded lengths."
    pairs = copy_task_pairs(120, COPY_VOCAB, COPY_LEN, seed=3)
    trainers = [small_trainer(dtype=torch.float64, pad_to_multiple=4, static_shapes=s) for s in (False, True)]
    plain, static = (t.evaluate(pairs) for t in trainers)
    assert_close(static["dev_loss"], plain["dev_loss"], rtol=1e-12, atol=0)
    assert_close(static["dev_nll"], plain["dev_nll"], rtol=1e-12, atol=0)
    sentences, src_len, tgt_len = trainers[1].largest_batch()
    assert src_len % 4 == 0 == tgt_len % 4 and src_len >= max(trainers[1].sampler.src_lens)
    assert sentences == trainers[1].cfg.max_tokens // max(tgt_len, -(-src_len // 4))
