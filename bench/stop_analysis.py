"""When does a trained model stop? End-of-sentence probabilities on the dev split, for the package and for the loop.

    python bench/stop_analysis.py --package RUN_DIR --out stops.json [--device cuda] [--ablate PATCHES]
    python bench/stop_analysis.py --loop LOOP_OUT --dev DEV.tsv --out stops.json [--device cuda]
    python bench/stop_analysis.py --references DEV.tsv... --out repetition.json   # how often the references repeat

Chapter 24 asks why greedy output length swings with the seed. This reads one trained model (a package run
directory, whose corpus.json names its dev split, or the loop's OUT with the model.pt that `reference_loop.py
--save-model` writes) and measures, on the dev split:

* teacher-forced, on the reference prefix: P(EOS) where the reference ends, and P(EOS) inside the sentence, by
  quarter of the reference length and by the piece before it (after , ; : against after any other piece); how
  often EOS is the most likely piece inside the sentence (where greedy decoding on the reference path would stop
  early), and in how many sentences that happens at least once;
* free-running greedy decoding: the length ratio (sacreBLEU's tokens), the share of outputs shorter than half their
  reference, longer than 1.5 times it, and repeating themselves (some word 4-gram twice), the share that end on a
  comma, semicolon or colon, the length ratio without the repeating outputs, and the three shortest and three
  longest outputs against their references.

Each program is read with its own code (the loop's model class from bench/reference_loop.py, which never imports
the package), so the numbers of the two compare as the models they are; their outputs are measured alike (sacreBLEU,
and the package's `repeats`, which `evaluate` counts with). A package run trained by bench/ablate_model.py is read
with the same patches (`--ablate zero_attn_bias+final_norm+no_generator_bias+torch_ce`).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import sacrebleu
import torch

from annotated_transformer.translate import repeats  # a measure of text, the same for both programs (as sacreBLEU)

HERE = Path(__file__).resolve().parent
CLAUSE_ENDS = (",", ";", ":")


def _bench_module(name: str):
    "A script of bench/ as a module (reference_loop never imports the package; ablate_model patches it)."
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _loop_module():
    return _bench_module("reference_loop")


def load_package(run: Path, device: str):
    """What `analyse` reads of a package run: log_probs(src, tgt_in), greedy(sources), piece_text(id), the dev pairs
    as ids and as text, the (pad, bos, eos) ids, and the device."""
    from annotated_transformer.data import load_corpus
    from annotated_transformer.masking import padding_mask, target_mask
    from annotated_transformer.translate import Translator, register_corpus_from
    tr = Translator(run, device=device)
    meta = tr.corpus
    register_corpus_from(meta["spec"], meta.get("loader"))
    pairs = load_corpus(meta["spec"], **meta.get("load_options", {})).split("dev")
    pad = tr.tokenizer.pad_id

    def log_probs(src, tgt_in):
        src_mask = padding_mask(src, pad)
        return tr.model.generator(tr.model(src, tgt_in, src_mask, target_mask(tgt_in, pad)))

    ids = [(tr.tokenizer.encode(tr.prepare(s)), tr.tokenizer.encode(t)) for s, t in pairs]
    return (log_probs, lambda sources: tr.translate(sources, greedy=True), tr.tokenizer.id_to_piece, ids, pairs,
            (pad, tr.tokenizer.bos_id, tr.tokenizer.eos_id), tr.device)


def load_loop(out: Path, dev: Path, device: str):
    "The same for the loop's OUT (model.pt, spm.model, result.json), read with the loop's own code."
    import sentencepiece as spm
    loop = _loop_module()
    args = json.loads((out / "result.json").read_text(encoding="utf-8"))["args"]
    model = loop.Seq2Seq(int(args["vocab"]), int(args["d_model"]), int(args["heads"]), int(args["layers"]),
                         int(args["d_ff"]), float(args["dropout"]))
    model.load_state_dict(torch.load(out / "model.pt", map_location="cpu"))
    model = model.to(device).eval()
    sp = spm.SentencePieceProcessor(model_file=str(out / "spm.model"))
    pairs = loop.read_tsv(dev)
    ids = [(sp.encode(s), sp.encode(t)) for s, t in pairs]
    # the loop's greedy builds its tensors on the default device: on a GPU run this under bench/tf32.py --default-cuda
    greedy = lambda sources: loop.greedy(model, sp, sources)
    return (lambda src, tgt_in: torch.log_softmax(model(src, tgt_in), -1), greedy, sp.id_to_piece, ids,
            pairs, (loop.PAD, loop.BOS, loop.EOS), torch.device(device))


@torch.no_grad()
def analyse(log_probs, greedy, piece, ids, pairs, special, device, batch: int = 64) -> dict:
    "The measurements listed in the module's docstring."
    pad, bos, eos = special
    at_end, inside, quarters, after = [], [], [[] for _ in range(4)], {"clause": [], "other": []}
    early_top, early_sentences = 0, 0
    order = sorted(range(len(ids)), key=lambda i: len(ids[i][1]))
    for k in range(0, len(order), batch):
        idx = order[k:k + batch]
        S, T = max(len(ids[i][0]) for i in idx) + 1, max(len(ids[i][1]) for i in idx) + 1
        src = torch.tensor([ids[i][0] + [eos] + [pad] * (S - 1 - len(ids[i][0])) for i in idx], device=device)
        tgt_in = torch.tensor([[bos] + ids[i][1] + [pad] * (T - 1 - len(ids[i][1])) for i in idx], device=device)
        lp = log_probs(src, tgt_in).float()
        p_eos, top = lp[..., eos].exp().cpu(), lp.argmax(-1).cpu()
        for row, i in enumerate(idx):
            tgt = ids[i][1]
            n = len(tgt)
            at_end.append(p_eos[row, n].item())
            stops = 0
            for pos in range(n):  # predicting piece `pos` of the target, after BOS and tgt[:pos]
                p = p_eos[row, pos].item()
                inside.append(p)
                quarters[min(3, 4 * pos // n)].append(p)
                if pos > 0:
                    after["clause" if piece(tgt[pos - 1]).strip("▁").endswith(CLAUSE_ENDS) else "other"].append(p)
                stops += int(top[row, pos].item() == eos)
            early_top += stops
            early_sentences += int(stops > 0)
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    hyps = greedy([s for s, _ in pairs])
    refs = [t for _, t in pairs]
    bleu = sacrebleu.BLEU().corpus_score(hyps, [refs])
    words = lambda s: len(s.split())
    loops = [repeats(h) for h in hyps]
    plain = [i for i in range(len(hyps)) if not loops[i]]
    plain_bleu = sacrebleu.BLEU().corpus_score([hyps[i] for i in plain], [[refs[i] for i in plain]])
    by_ratio = sorted(range(len(hyps)), key=lambda i: words(hyps[i]) / max(words(refs[i]), 1))
    example = lambda i: {"source": pairs[i][0], "reference": refs[i], "hypothesis": hyps[i]}
    return {
        "dev_sentences": len(pairs),
        "p_eos_at_end": mean(at_end),
        "p_eos_inside": mean(inside),
        "p_eos_inside_by_quarter": [mean(q) for q in quarters],
        "p_eos_after_clause_end": mean(after["clause"]), "positions_after_clause_end": len(after["clause"]),
        "p_eos_after_other": mean(after["other"]),
        "eos_top_inside_share": early_top / max(len(inside), 1),
        "sentences_with_early_eos_top": early_sentences / len(ids),
        "greedy_dev": {"bleu": bleu.score, "length_ratio": bleu.sys_len / max(bleu.ref_len, 1), "bp": bleu.bp,
                       "under_half": sum(words(h) < 0.5 * words(r) for h, r in zip(hyps, refs)) / len(refs),
                       "over_one_and_a_half": sum(words(h) > 1.5 * words(r) for h, r in zip(hyps, refs)) / len(refs),
                       "repeating": sum(loops) / len(hyps),
                       "length_ratio_without_repeating": plain_bleu.sys_len / max(plain_bleu.ref_len, 1),
                       "ends_on_clause_mark": sum(h.rstrip().endswith(CLAUSE_ENDS) for h in hyps) / len(hyps),
                       "shortest": [example(i) for i in by_ratio[:3]], "longest": [example(i) for i in by_ratio[-3:]]},
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--package", type=Path, help="a package run directory trained with --data corpus")
    which.add_argument("--loop", type=Path, help="the loop's --out directory, trained with --save-model")
    which.add_argument("--references", type=Path, nargs="+", help="TSV files (source, reference): the share of "
                       "references that repeat a word 4-gram themselves, the baseline for the models' outputs")
    p.add_argument("--dev", type=Path, help="the dev split's TSV (for --loop)")
    p.add_argument("--ablate", metavar="PATCHES", help="the bench/ablate_model.py patches a --package run was "
                   "trained with (e.g. zero_attn_bias+torch_ce), so that its model is built the same way")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--device", default="cpu")
    a = p.parse_args(argv)
    if a.loop is not None and a.dev is None:
        p.error("--loop needs --dev DEV.tsv")
    if a.ablate is not None:
        if a.package is None:
            p.error("--ablate patches a package run; give --package RUN")
        ablate = _bench_module("ablate_model")
        unknown = [one for one in a.ablate.split("+") if one not in ablate.VARIANTS]
        if unknown:
            p.error(f"--ablate: unknown variant {unknown[0]!r}; choose from {', '.join(ablate.VARIANTS)}")
        for one in a.ablate.split("+"):
            ablate.patch(one)
    for path in (a.package or a.loop, a.dev, *(a.references or ())):
        if path is not None and not path.exists():
            p.error(f"{path}: no such file or directory")
    if a.references:
        refs = {path.name: [t for _, t in _loop_module().read_tsv(path)] for path in a.references}
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        result = {"command": " ".join(["python bench/stop_analysis.py", *sys.argv[1:]]), "commit": commit,
                  "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "files": {name: {"sentences": len(r), "repeating": sum(map(repeats, r)) / len(r)}
                            for name, r in refs.items()}}
        a.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(json.dumps(result))
        return 0
    loaded = load_package(a.package, a.device) if a.package else load_loop(a.loop, a.dev, a.device)
    result = {"model": str(a.package or a.loop), "program": "package" if a.package else "loop",
              **({"ablate": a.ablate} if a.ablate else {}), **analyse(*loaded)}
    a.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if not isinstance(v, list)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
