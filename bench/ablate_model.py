"""Train with ONE difference between the package and the independent loop (`bench/reference_loop.py`) removed.

    python bench/ablate_model.py VARIANT train [annotated-transformer train options...]
    python bench/ablate_model.py VARIANT evaluate --model RUN [annotated-transformer evaluate options...]

The package and the loop differ in a few places that no test of equal outputs can see, because they change how
the model starts or learns, not what a given set of weights computes. Each VARIANT patches one of them into
`annotated-transformer train` for this process only (the library is not changed), so that its effect on the
reference split can be measured at equal seed, data order and dropout masks (every patch leaves the random
stream as it is):

* `zero_attn_bias` -- the biases of the attention projections start at zero, as `nn.MultiheadAttention`'s do
  (the package: PyTorch's default for `nn.Linear`, uniform in +-1/sqrt(d_model));
* `final_norm` -- one more LayerNorm after the encoder stack and after the decoder stack, as `nn.Transformer`
  has even in its post-norm form (the package: none, as the paper);
* `no_generator_bias` -- the pre-softmax projection is the shared embedding matrix alone, as in the loop (the
  package: the matrix plus a bias);
* `torch_ce` -- the loss of `nn.CrossEntropyLoss(label_smoothing=0.1)`: eps/V on every class, the label and PAD
  included (the package: eps/(V-2) on the classes other than the label and PAD);
* `none` -- nothing patched (for a difference in the data options, e.g. the loop's tokenizer:
  `--data-option tokenizer=runs/ref_deen_s1/spm.model`).

Variants join with "+" (e.g. `zero_attn_bias+final_norm+no_generator_bias+torch_ce`): all of them at once.

Chapter 22 and `results/reference_split.json` (section `full_size_ablation`) hold what each one measured.
"""
import sys

from torch import nn

import annotated_transformer.model as M
import annotated_transformer.loss as L
import annotated_transformer.train_config as T
from annotated_transformer.cli import main
from annotated_transformer.multihead import MultiHeadAttention

VARIANTS = ("zero_attn_bias", "final_norm", "no_generator_bias", "torch_ce", "none")


def patch(variant: str) -> None:
    if variant == "zero_attn_bias":
        init_weights = M.init_weights

        def zero_bias_init(model, rule="default"):
            init_weights(model, rule)
            for m in model.modules():
                if isinstance(m, MultiHeadAttention):
                    for proj in (m.w_q, m.w_k, m.w_v, m.w_o):
                        nn.init.zeros_(proj.bias)
        M.init_weights = zero_bias_init
    elif variant == "final_norm":
        M._final_norm = lambda layer: nn.LayerNorm(layer.d_model, eps=layer.sublayer[0].norm.eps)
    elif variant == "no_generator_bias":
        build = T.ARCHS["ours"]

        def without_bias(config):
            model = build(config)
            model.generator.proj.register_parameter("bias", None)
            return model
        T.ARCHS["ours"] = without_bias  # what build_model (and so the train command) calls for --arch ours
    elif variant == "torch_ce":
        def forward(self, log_probs, target):  # reduction="sum", as Seq2SeqLoss uses it
            eps, V = self.smoothing, self.vocab_size
            logp, y = log_probs.reshape(-1, V), target.reshape(-1)
            loss = -(1 - eps) * logp.gather(1, y.unsqueeze(1)).squeeze(1) - eps / V * logp.sum(1)
            return loss.masked_fill(y == self.pad_idx, 0.0).sum()
        L.LabelSmoothingLoss.forward = forward
    elif variant != "none":
        raise SystemExit(f"ablate_model.py: unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[2] not in ("train", "evaluate"):  # evaluate: a run it trained, built the same way
        raise SystemExit(f"usage: python bench/ablate_model.py {{{','.join(VARIANTS)}}}[+...] train|evaluate [options]")
    for one in sys.argv[1].split("+"):
        patch(one)
    sys.exit(main(sys.argv[2:]))
