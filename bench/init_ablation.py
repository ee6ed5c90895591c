"""Why did --arch torch learn faster than ours on bible:de-en? Ablate the two initialisation differences.

    python bench/init_ablation.py VARIANT SEED [STEPS]

The ablation in bench/results/init_ablation_cpu.json was recorded before commit a5ff418, when `init_weights` drew
W_Q, W_K, W_V as separate square Xavier matrices ("per matrix"). That commit made our default the packed rule that
the ablation found to matter, so the variants now mean:

    ours_per_matrix  the old default, for the record: make_model built with the per-matrix rule (same random draws)
    ours             today's make_model: W_Q, W_K, W_V with the packed bound sqrt(6/(4d)) -- the old "ours_qkvscale"
    torch            --arch torch (nn.Transformer)
    ours_zerobias    today's default plus zero attention biases (the old "ours_torchinit")

Until commit 8ef194f, "ours" drew exactly the weights of the old "ours_qkvscale" (Xavier for every matrix, then
W_Q, W_K, W_V redrawn in the same order) and reproduced that row bit for bit. Since 8ef194f every variant built by
make_model also draws its embedding tables from N(0, 1/d_model) (chapter 06; the effect of that change is measured
by bench/reference_loop.py and bench/collect_reference_split.py), so the recorded rows are no longer reproduced.
"""
import json, sys, time
import torch
from torch import nn
torch.set_num_threads(1)
from annotated_transformer.training import TrainConfig, Trainer, build_model
from annotated_transformer.subwords import corpus_data
from annotated_transformer.multihead import MultiHeadAttention

variant, seed = sys.argv[1], int(sys.argv[2])
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 300
cfg = TrainConfig(layers=2, d_model=128, heads=4, d_ff=512, dropout=0.1, share_embeddings=True, warmup=400,
                  max_tokens=3000, steps=steps, seed=seed, data="corpus",
                  data_options={"spec": "bible:de-en", "vocab_size": 8000, "max_len": 128},
                  log_every=50, eval_every=0, checkpoint_every=0, progress=False, device="cpu",
                  arch="torch" if variant == "torch" else "ours")
bundle = corpus_data(cfg)
torch.manual_seed(seed)
from annotated_transformer import model as model_module
from annotated_transformer.training import model_config_from
mc = model_config_from(cfg, bundle.src_vocab, bundle.tgt_vocab)


def per_matrix_init(model: nn.Module) -> None:
    "The initialisation before commit a5ff418: Xavier-uniform for every matrix, W_Q, W_K, W_V each on its own."
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)


if variant == "ours_per_matrix":
    packed_init, model_module.init_weights = model_module.init_weights, per_matrix_init
    try:
        model = build_model(dict(mc))
    finally:
        model_module.init_weights = packed_init
else:
    model = build_model(dict(mc))
if variant == "ours_zerobias":
    for m in model.modules():
        if isinstance(m, MultiHeadAttention):
            for lin in (m.w_q, m.w_k, m.w_v, m.w_o):
                nn.init.zeros_(lin.bias)
elif variant not in ("ours", "ours_per_matrix", "torch"):
    raise SystemExit(f"unknown variant {variant!r}: ours, ours_per_matrix, ours_zerobias or torch")
tr = Trainer(model, bundle.train, cfg, model_config=mc, dev_pairs=bundle.dev[:400])
t = time.time()
tr.fit() if hasattr(tr, "fit") else None
ev = tr.evaluate() if hasattr(tr, "evaluate") else {}
print(json.dumps({"variant": variant, "seed": seed, "steps": steps, "dev": ev, "train_last": tr.history[-1] if tr.history else None, "wall": time.time() - t}))
