"""Record where the heads of a trained translation model put their attention (chapter 22): results/attention_heads.json.

    python bench/collect_attention.py runs/deen_paperdrop_s0 [--sentences 500] [--threads 1]
    python bench/collect_attention.py runs/deen_paperdrop_s0 --explorer [--explorer-sentences 24]

With --explorer it writes, instead, what chapter 22's attention explorer (appendix G) shows, into
results/attention_explorer_deen.json (--out): the first EXPLORER_SENTENCES test sentences with 6 to 16 subword pieces
on each side (--explorer-pieces; the source as the model reads it, the reference as the tokenizer splits it), each
with every layer's and head's weights of the three kinds (teacher-forced on the reference, in hundredths), its
reference and the model's beam translation (k = 4, alpha = 0.6), and the per-head statistics below over the first N
test sentences.

RUN_DIR is a run of `annotated-transformer train --data corpus`; its newest checkpoint is read (no averaging: the run
kept only its last two). Recorded:
* the attention weights of every layer and head, for the three kinds of attention, of one test sentence (the
  shortest of at least 10 subword pieces; ties: the first in the split), teacher-forced on its reference
  translation, with the subword pieces of both sides (and, for comparison, the model's own beam search translation,
  k = 4, alpha = 0.6);
* per layer and head, the means over the first N test sentences, teacher-forced on their reference translations, of
  chapter 00's `attention_statistics`: the share of each query's weight on its own position, the one before and the
  one after it, the first and the last key, and the entropy of its weights in bits (the decoder's self-attention
  from its second query on: its first sees only itself); and, for comparison, the entropy of an even spread over
  the keys a query sees and the weight it would put on each.
The checkpoint is never copied. This is a recording tool, not a test.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import subprocess
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from annotated_transformer.architecture import attention_statistics  # noqa: E402
from annotated_transformer.batching import BOS, EOS, PAD  # noqa: E402
from annotated_transformer.data import load_corpus  # noqa: E402
from annotated_transformer.decoding import attention_weights  # noqa: E402
from annotated_transformer.masking import padding_mask, target_mask  # noqa: E402
from annotated_transformer.translate import Translator  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import cpu_name, git_state, uncommitted  # noqa: E402

KINDS = ("encoder self", "decoder self", "cross")


def weights_of(translator: Translator, source: str, target: str) -> tuple[dict, list[int], list[int]]:
    "The weights {kind: (layers, h, queries, keys)} of one pair, teacher-forced on `target`; the ids of both sides."
    encode = translator.tokenizer.encode
    src_ids, tgt_ids = encode(translator.prepare(source)), encode(target)
    src = torch.tensor([src_ids + [EOS]])
    tgt_in = torch.tensor([[BOS] + tgt_ids])
    maps = attention_weights(translator.model, src, tgt_in, padding_mask(src, PAD), target_mask(tgt_in, PAD))
    return {kind: w[:, 0] for kind, w in maps.items()}, src_ids, tgt_ids


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", type=Path)
    p.add_argument("--sentences", type=int, default=500)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--explorer", action="store_true", help="write results/attention_explorer_deen.json instead")
    p.add_argument("--explorer-sentences", type=int, default=24)
    p.add_argument("--explorer-pieces", type=int, nargs=2, default=(6, 16), metavar=("MIN", "MAX"),
                   help="the subword pieces a sentence of the explorer has on each side")
    p.add_argument("--out", type=Path, default=REPO / "results" / "attention_explorer_deen.json",
                   help="where --explorer writes")
    args = p.parse_args(argv)
    if args.explorer_sentences < 1 or args.sentences < 1:
        p.error("--sentences and --explorer-sentences must be at least 1")
    changed = uncommitted(REPO, ("annotated_transformer", "bench/collect_attention.py"))
    torch.set_num_threads(args.threads)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    git = lambda *a: subprocess.run(["git", *a], cwd=REPO, capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD")
    if git("status", "--porcelain", "--", "annotated_transformer", "bench/collect_attention.py"):
        commit += " (the working tree held uncommitted changes)"
    translator = Translator(args.run, avg=1)
    meta = translator.corpus
    corpus = load_corpus(meta["spec"], **meta.get("load_options", {}))

    sums: dict = {kind: {} for kind in KINDS}
    even = {kind: 0.0 for kind in KINDS}  # the entropy of an even spread over the keys a query sees
    even_share = {kind: 0.0 for kind in KINDS}  # and the weight it puts on each of them
    pairs = corpus.test[:args.sentences]
    for src_text, ref in pairs:
        maps, _, _ = weights_of(translator, src_text, ref)
        for kind in KINDS:
            w = maps[kind].double()
            start = 1 if kind == "decoder self" else 0
            for name, value in attention_statistics(w, start=start).items():
                sums[kind][name] = sums[kind].get(name, 0) + value
            seen = [w.size(-1)] if kind != "decoder self" else range(start + 1, w.size(-2) + 1)
            even[kind] += sum(math.log2(k) for k in seen) / len(seen)
            even_share[kind] += sum(1 / k for k in seen) / len(seen)
    statistics = {kind: {name: [[round(float(v) / len(pairs), 4) for v in layer] for layer in total.tolist()]
                         for name, total in sums[kind].items()} for kind in KINDS}
    for kind in KINDS:
        statistics[kind]["even_entropy"] = round(even[kind] / len(pairs), 4)
        statistics[kind]["even_share"] = round(even_share[kind] / len(pairs), 4)

    dev = [json.loads(line) for line in (args.run / "metrics.jsonl").read_text().splitlines() if '"dev_ppl"' in line]
    if args.explorer:
        return write_explorer(args, argv, translator, corpus, statistics, len(pairs), changed, started, dev)
    # the one sentence of every layer and head that this record keeps (the explorer records its own)
    piece = translator.tokenizer.id_to_piece
    n = lambda s: len(translator.tokenizer.encode(translator.prepare(s)))
    source = min((s for s, _ in corpus.test if n(s) >= 10), key=n)
    reference = dict(corpus.test)[source]
    translation = translator.translate([source], beam_size=4, length_penalty=0.6)[0]
    maps, src_ids, tgt_ids = weights_of(translator, source, reference)
    example = {"source": source, "reference": reference, "translation": translation,
               "src_tokens": [piece(i) for i in src_ids] + ["</s>"],
               "tgt_tokens": ["<s>"] + [piece(i) for i in tgt_ids],
               "weights": {kind: [[[[round(float(v), 4) for v in row] for row in head] for head in layer]
                                  for layer in w.tolist()] for kind, w in maps.items()}}
    record = {
        "what": "where the heads of a trained German->English model put their attention: every layer and head of "
                "one test sentence, and per-head means over test sentences (bench/collect_attention.py)",
        "run": args.run.name, "checkpoint": translator.checkpoints[-1].name,
        **run_identity(args.run),
        "model": translator.model_config, "dev_ppl": round(dev[-1]["dev_ppl"], 2) if dev else None,
        "provenance": {"command": "python bench/collect_attention.py " + " ".join(argv or sys.argv[1:]),
                       "commit": commit, "date": started, "torch": torch.__version__,
                       "device": f"cpu ({cpu_name()}), {args.threads} thread(s)"},
        "example": example,
        "statistics": {"sentences": len(pairs), "split": "test", "teacher_forcing": "reference translations",
                       **statistics},
    }
    dest = REPO / "results" / "attention_heads.json"
    dest.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {dest.relative_to(REPO)}: {len(pairs)} sentences; example {source!r} -> {translation!r}")


RECORDED_RUNS = REPO / "bench" / "results" / "inner_dropout.json"  # the runs of chapter 22's recipe


def run_identity(run: Path) -> dict:
    """What trained RUN: its command and the code that ran it (config.json), and the recorded run of
    bench/results/inner_dropout.json whose command it repeats, if any (a run again of the same command at other
    code is not that run: its numbers are its own)."""
    config = json.loads((run / "config.json").read_text())
    command = " ".join(config.get("command", []))
    recorded = json.loads(RECORDED_RUNS.read_text())["reference_recipe"]
    same = [f"bench/results/inner_dropout.json, reference_recipe.{arm}, {r['name']} (dev ppl "
            f"{r['dev_curve'][-1]['dev_ppl']:.2f}, commit {r['commit'].split()[0]})"
            for arm in ("inner_dropout_on", "inner_dropout_off") for r in recorded.get(arm, [])
            if isinstance(r, dict) and r.get("command") == command]
    return {"train_command": command, "trained_by_code": config.get("code"),
            "same_command_as": same[0] if same else None}


def write_explorer(args, argv, translator, corpus, statistics, n_stats, changed, started, dev) -> None:
    "results/attention_explorer_deen.json: the sentences, weights and statistics chapter 22's explorer shows."
    from annotated_transformer.explorer import explorer_example

    piece = translator.tokenizer.id_to_piece
    size = lambda text: len(translator.tokenizer.encode(text))
    low, high = args.explorer_pieces
    chosen = [(s, r) for s, r in corpus.test
              if low <= size(translator.prepare(s)) <= high and low <= size(r) <= high]
    if len(chosen) < args.explorer_sentences:
        raise SystemExit(f"--explorer-sentences {args.explorer_sentences}: only {len(chosen)} test sentences "
                         f"have {low} to {high} pieces on each side (--explorer-pieces)")
    chosen = chosen[:args.explorer_sentences]
    outputs = translator.translate([s for s, _ in chosen], beam_size=4, length_penalty=0.6)
    examples = []
    for (source, reference), output in zip(chosen, outputs):
        maps, src_ids, tgt_ids = weights_of(translator, source, reference)
        examples.append(explorer_example(
            maps, [piece(i) for i in src_ids] + ["</s>"], ["<s>"] + [piece(i) for i in tgt_ids], name=source,
            text={"source": source, "reference": reference, "output": output}))
    names = ("diagonal", "previous", "next", "first", "last", "entropy")
    record = {
        "what": "what chapter 22's attention explorer shows: test sentences of a trained German->English model, "
                "every layer's and head's weights (teacher-forced on the reference, in hundredths), and per-head "
                "statistics over test sentences (bench/collect_attention.py --explorer)",
        "scale": 100, "examples": examples,
        "statistics": {kind: {"sentences": n_stats, "rows": {n: statistics[kind][n] for n in names}}
                       for kind in KINDS},
        "run": args.run.name, "checkpoint": translator.checkpoints[-1].name, **run_identity(args.run),
        "model": translator.model_config, "dev_ppl": round(dev[-1]["dev_ppl"], 2) if dev else None,
        "provenance": {"command": "python bench/collect_attention.py " + " ".join(argv or sys.argv[1:]),
                       "git": git_state(), "uncommitted": changed, "date": started, "torch": torch.__version__,
                       "device": f"cpu ({cpu_name()}), {args.threads} thread(s)"},
    }
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {len(examples)} sentences, {len(text.encode()):,} bytes")


if __name__ == "__main__":
    main()
