"""Does initialisation explain the gap between our model and nn.Transformer? (chapter 9b)

Trains our model with the recipe of a recorded `--data corpus` run, but initialises every attention layer the way
torch.nn.MultiheadAttention does: W^Q, W^K, W^V drawn as ONE (3 d_model x d_model) Xavier-uniform matrix (a bound
1/sqrt(2) of ours, which draws each d_model x d_model matrix separately), and all four attention biases zero (ours
start uniform in +-1/sqrt(d_model), nn.Linear's default). Everything else -- data, data order, seed, recipe -- is the
run's. The learning curves go to OUT/metrics.jsonl, to compare with the recorded runs at equal steps.

    python bench/init_experiment.py --like /work/runs/deen_ours --steps 300 --out /work/runs/deen_ours_torchinit

This is an experiment, not a test. It was recorded (results/deen_ours_torchinit.json) before commit a5ff418, which
made the packed W^Q, W^K, W^V bound our default; since then it differs from `make_model` only in the zero biases.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from annotated_transformer.multihead import MultiHeadAttention  # noqa: E402
from annotated_transformer.training import Trainer, TrainConfig, _print_record, build_model, get_data_builder, model_config_from  # noqa: E402


@torch.no_grad()
def pytorch_style_attention_init(model: nn.Module) -> None:
    "Re-initialise every MultiHeadAttention like nn.MultiheadAttention: packed Xavier for W^Q,W^K,W^V, zero biases."
    for m in model.modules():
        if isinstance(m, MultiHeadAttention):
            d = m.d_model
            packed = torch.empty(3 * d, d)
            nn.init.xavier_uniform_(packed)
            for lin, w in zip((m.w_q, m.w_k, m.w_v), packed.chunk(3)):
                lin.weight.copy_(w)
            for lin in (m.w_q, m.w_k, m.w_v, m.w_o):
                if lin.bias is not None:
                    lin.bias.zero_()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--like", type=Path, required=True, help="a recorded run directory: its config.json gives the recipe")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    recorded = json.loads((args.like / "config.json").read_text())
    settings = {**recorded["train"], "steps": args.steps}
    # the recorded run's own tokenizer: the same vocabulary without training it again
    settings["data_options"] = {**settings["data_options"], "tokenizer": str(args.like / "tokenizer.model")}
    cfg = TrainConfig.from_dict(settings)
    if cfg.arch != "ours":
        raise SystemExit("--like must be a run of our model (arch ours)")
    torch.set_num_threads(cfg.threads or torch.get_num_threads())
    # the same sequence of seeds as annotated-transformer train (training._train)
    random.seed(cfg.seed); np.random.seed(cfg.seed); torch.manual_seed(cfg.seed)
    data = get_data_builder(cfg.data)(cfg)
    model_config = model_config_from(cfg, data.src_vocab, data.tgt_vocab)
    model = build_model(model_config)
    pytorch_style_attention_init(model)
    torch.manual_seed(cfg.seed)
    trainer = Trainer(model, data.train, cfg, model_config=model_config, dev_pairs=data.dev, out_dir=args.out,
                      pad=data.pad, bos=data.bos, eos=data.eos)
    trainer.on_log = _print_record
    args.out.mkdir(parents=True, exist_ok=True)
    git = lambda *a: subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True).stdout.strip()
    start = time.time()
    info = {"experiment": "our model, nn.MultiheadAttention-style attention init", "like": str(args.like),
            "train": cfg.to_dict(), "model": model_config, "torch": torch.__version__,
            "data": {"name": cfg.data, "src_vocab": data.src_vocab, "tgt_vocab": data.tgt_vocab, "meta": data.meta},
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "provenance": {"command": " ".join(["python", "bench/init_experiment.py",
                                                *(sys.argv[1:] if argv is None else argv)]),
                           "commit": git("rev-parse", "--short", "HEAD") +
                                     (" (with uncommitted changes)" if git("status", "--porcelain") else ""),
                           "start_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start))}}
    (args.out / "config.json").write_text(json.dumps(info, indent=2) + "\n")
    print(f"training {sum(p.numel() for p in model.parameters()):,} parameters, {len(data.train)} pairs, "
          f"{cfg.steps} steps", flush=True)
    trainer.fit()
    info["provenance"].update(end_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              wall_seconds=round(time.time() - start))
    (args.out / "config.json").write_text(json.dumps(info, indent=2) + "\n")


if __name__ == "__main__":
    main()
