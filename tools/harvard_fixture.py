"""Write the test fixture of `harvard_to_ours` (module `annotated_transformer.torch_compare`): weights, inputs and
outputs made by Harvard's own code.

    python tools/harvard_fixture.py --harvard PATH/the_annotated_transformer.py

PATH is a copy of harvardnlp/annotated-transformer's `the_annotated_transformer.py` (MIT licence; not part of this
repository). Only its model's definitions are run: the script takes the module-level `def`s and `class`es it needs
out of the file's syntax tree, so that the notebook's other imports (spacy, torchtext, altair, ...) are not needed.
It builds Harvard's `make_model` in float64 with seed 0, draws non-trivial LayerNorm gains and biases, and records:

- tests/fixtures/harvard_small.safetensors: the state dict (Harvard's names), the inputs and the log-probabilities of
  `model.generator(model(src, tgt, src_mask, tgt_mask))` in eval mode;
- tests/fixtures/harvard_small.json: the sizes, the source file's SHA-256, the command, torch and the date.
"""
from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEEDED = ("clones", "LayerNorm", "SublayerConnection", "EncoderLayer", "Encoder", "DecoderLayer", "Decoder",
          "subsequent_mask", "attention", "MultiHeadedAttention", "PositionwiseFeedForward", "Embeddings",
          "PositionalEncoding", "EncoderDecoder", "Generator", "make_model")
SIZES = dict(src_vocab=11, tgt_vocab=13, N=2, d_model=32, d_ff=64, h=4)
POSITIONS = 16


def harvard_namespace(path: Path) -> dict:
    "Harvard's model definitions, run from PATH's syntax tree (NEEDED only), with the imports they use."
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in NEEDED]
    missing = set(NEEDED) - {n.name for n in defs}
    if missing:
        raise SystemExit(f"{path}: no definition of {', '.join(sorted(missing))}: is it Harvard's file?")
    import copy
    import math

    import torch
    from torch import nn
    from torch.nn.functional import log_softmax
    namespace = {"torch": torch, "nn": nn, "math": math, "copy": copy, "log_softmax": log_softmax}
    exec(compile(ast.Module(body=defs, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--harvard", type=Path, required=True, help="Harvard's the_annotated_transformer.py")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "harvard_small")
    ap.add_argument("--source", default="harvardnlp/annotated-transformer, the_annotated_transformer.py",
                    help="where the file came from, for the record")
    a = ap.parse_args(argv)
    import torch
    from safetensors.torch import save_file
    H = harvard_namespace(a.harvard)
    torch.manual_seed(0)
    model = H["make_model"](**SIZES, dropout=0.1).double().eval()
    with torch.no_grad():  # gains and biases away from 1 and 0, so that a misplaced norm shows
        for name, p in model.named_parameters():
            if name.endswith("a_2"):
                p.copy_(1 + 0.3 * torch.randn_like(p))
            elif name.endswith("b_2"):
                p.copy_(0.2 * torch.randn_like(p))
    src = torch.tensor([[1, 5, 7, 3, 9, 2, 0], [4, 8, 6, 2, 0, 0, 0]])  # 0 is padding
    tgt = torch.tensor([[1, 3, 12, 5, 7, 9], [1, 4, 4, 10, 0, 0]])
    src_mask = (src != 0).unsqueeze(-2)
    tgt_mask = (tgt != 0).unsqueeze(-2) & H["subsequent_mask"](tgt.size(-1))
    with torch.no_grad():
        out = model.generator(model(src, tgt, src_mask, tgt_mask))
    # the positional tables' first POSITIONS rows only (Harvard keeps 5,000, computed in float32): enough for these
    # inputs, and the fixture stays small
    tensors = {f"state.{k}": (v[:, :POSITIONS] if k.endswith(".pe") else v).contiguous()
               for k, v in model.state_dict().items()}
    tensors.update({"input.src": src, "input.tgt": tgt, "input.src_mask": src_mask, "input.tgt_mask": tgt_mask,
                    "output.log_probs": out.contiguous()})
    a.out.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(a.out.with_suffix(".safetensors")))
    record = {"what": "Harvard's make_model in float64, seed 0, eval mode: its state dict, inputs and log-probabilities",
              "sizes": SIZES, "dropout": 0.1, "positions_kept": POSITIONS,
              "harvard_file_sha256": hashlib.sha256(a.harvard.read_bytes()).hexdigest(),
              "harvard_source": a.source,
              "command": "python tools/harvard_fixture.py --harvard PATH/the_annotated_transformer.py",
              "torch": torch.__version__, "date": datetime.date.today().isoformat()}
    a.out.with_suffix(".json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {a.out.with_suffix('.safetensors')} ({len(tensors)} tensors) and its .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
