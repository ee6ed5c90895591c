"""Why did --arch torch learn faster than ours on bible:de-en? Ablate the two initialization differences.

    python bench/init_ablation.py VARIANT SEED [STEPS]

The ablation in bench/results/init_ablation_cpu.json was recorded before commit a5ff418, when `init_weights` drew
W_Q, W_K, W_V as separate square Xavier matrices ("per matrix"). That commit made our default the packed rule that
the ablation found to matter, so the variants now mean:

    ours_per_matrix  the old default, for the record: make_model with init="harvard" (Xavier for every matrix on its
                     own, the embedding tables too; chapter 07)
    ours             today's make_model: W_Q, W_K, W_V with the packed bound sqrt(6/(4d)) -- the old "ours_qkvscale"
    torch            --arch torch (nn.Transformer)
    ours_zerobias    today's default plus zero attention biases (the old "ours_torchinit")

Until commit 8ef194f, "ours" drew exactly the weights of the old "ours_qkvscale" (Xavier for every matrix, then
W_Q, W_K, W_V redrawn in the same order) and reproduced that row bit for bit. Since 8ef194f every variant built by
make_model also draws its embedding tables from N(0, 1/d_model) (chapter 07; the effect of that change is measured
by bench/reference_loop.py and bench/collect_reference_split.py), so the recorded rows are no longer reproduced.
"""
import dataclasses, json, sys, time
import torch
from torch import nn
torch.set_num_threads(1)
from annotated_transformer.model import TransformerConfig
from annotated_transformer.train_config import TrainConfig
from annotated_transformer.trainer import Trainer
from annotated_transformer.train_config import build_model
from annotated_transformer.subwords import corpus_data
from annotated_transformer.multihead import MultiHeadAttention

VARIANTS = {"ours": ("default", "ours"), "ours_per_matrix": ("harvard", "ours"), "torch": ("default", "torch"),
            "ours_zerobias": ("default", "ours")}  # variant -> (TransformerConfig.init, arch)
variant, seed = sys.argv[1], int(sys.argv[2])
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 300
if variant not in VARIANTS:
    raise SystemExit(f"unknown variant {variant!r}: {', '.join(VARIANTS)}")
init, arch = VARIANTS[variant]
cfg = TrainConfig(model=TransformerConfig(N=2, d_model=128, h=4, d_ff=512, dropout=0.1, share_embeddings=True, init=init),
                  arch=arch, warmup=400, max_tokens=3000, steps=steps, seed=seed, data="corpus",
                  data_options={"spec": "bible:de-en", "vocab_size": 8000, "max_subwords": 128},
                  log_every=50, eval_every=0, checkpoint_every=0, progress=False, device="cpu")
bundle = corpus_data(cfg)
torch.manual_seed(seed)
model = build_model(dataclasses.replace(cfg.model, src_vocab=bundle.src_vocab, tgt_vocab=bundle.tgt_vocab), arch)
if variant == "ours_zerobias":
    for m in model.modules():
        if isinstance(m, MultiHeadAttention):
            for lin in (m.w_q, m.w_k, m.w_v, m.w_o):
                nn.init.zeros_(lin.bias)
tr = Trainer(model, bundle.train, cfg, dev_pairs=bundle.dev[:400])
t = time.time()
tr.fit() if hasattr(tr, "fit") else None
ev = tr.evaluate() if hasattr(tr, "evaluate") else {}
print(json.dumps({"variant": variant, "seed": seed, "steps": steps, "dev": ev, "train_last": tr.history[-1] if tr.history else None, "wall": time.time() - t}))
