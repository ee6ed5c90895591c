"""Collect a recorded translation run (chapter 9b) into one small JSON file: results/<name>.json.

    python bench/collect_translation_results.py RUN_DIR --evals E1.json E2.json ... [--heatmap] [--agreement N]
        [--name NAME] [--label TEXT]

RUN_DIR is a directory written by `annotated-transformer train --data corpus`; E*.json are files written by
`annotated-transformer evaluate --json`; RUN_DIR.provenance.json and RUN_DIR.log, if present (written by the
script that launched the run), give the exact command, the git commit, start and end time. What goes in: the
settings, the provenance (command, commit, device, torch version, dates, wall time), the learning curves from
metrics.jsonl, the scores with their sacrebleu signatures and sample translations, and optionally the attention
weights of one short test sentence (--heatmap, our architecture only) and, for an `--arch torch` run, how often
decoding with nn.Transformer itself and with its weights copied into our implementation agree (--agreement N).
Checkpoints are never copied. This is a recording tool, not a test.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import platform
import re
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from annotated_transformer.data import load_corpus  # noqa: E402
from annotated_transformer.translate import Translator  # noqa: E402


from provenance import cpu_name  # noqa: E402  (bench/provenance.py, next to this script)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", type=Path)
    p.add_argument("--evals", type=Path, nargs="*", default=[])
    p.add_argument("--name", help="results/NAME.json (default: the run directory's name)")
    p.add_argument("--label", default="", help="a short description of the run")
    p.add_argument("--heatmap", action="store_true", help="store the attention maps of one short test sentence")
    p.add_argument("--agreement", type=int, default=0, metavar="N",
                   help="torch runs: greedy-decode the first N test sentences with nn.Transformer and with the "
                        "converted model, and record how many agree")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    run = args.run
    config = json.loads((run / "config.json").read_text())
    metrics = read_jsonl(run / "metrics.jsonl")
    prov_file, log_file = Path(f"{run}.provenance.json"), Path(f"{run}.log")
    prov = json.loads(prov_file.read_text()) if prov_file.exists() else dict(config.get("provenance", {}))
    if log_file.exists():
        m = re.search(r"exit (\d+) end_epoch (\d+) end_utc (\S+)", log_file.read_text())
        if m:
            prov.update(exit_status=int(m.group(1)), end_utc=m.group(3))
            if "start_epoch" in prov:
                prov["wall_seconds"] = int(m.group(2)) - prov["start_epoch"]
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", log_file.read_text())
        if m:
            prov["max_rss_mib"] = round(int(m.group(1)) / 1024)
    train_seconds = sum(1 / r["steps_per_s"] * (r["step"] - prev) for r, prev in
                        zip([r for r in metrics if "loss" in r],
                            [0] + [r["step"] for r in metrics if "loss" in r][:-1]))
    tok = run / "tokenizer.model"
    out = {
        "name": args.name or run.name, "label": args.label,
        "experiment": config.get("experiment"),
        "provenance": {**prov, "device": f"cpu ({cpu_name()})", "threads": config.get("threads", config["train"]["threads"]),  # the count used
                       "torch": config["torch"], "python": platform.python_version(), "train_started": config["date"],
                       "seconds_in_training_steps": round(train_seconds, 1)},
        "train_config": config["train"], "model_config": config["model"],
        "data": {k: v for k, v in config["data"].items()},
        "tokenizer_sha256": hashlib.sha256(tok.read_bytes()).hexdigest() if tok.exists() else None,
        "curves": {"train": [{k: r[k] for k in ("step", "epoch", "loss", "nll", "lr", "tokens_per_s")}
                             for r in metrics if "loss" in r],
                   "dev": [{k: r[k] for k in ("step", "dev_loss", "dev_nll", "dev_ppl")} for r in metrics if "dev_loss" in r]},
        "evaluations": [],
    }
    for e in args.evals:
        record = json.loads(e.read_text())
        record.pop("hypotheses", None)
        record["command"] = record.get("command") or None
        out["evaluations"].append(record)
    if args.heatmap or args.agreement:
        translator = Translator(run, avg=5 if len(list((run / "checkpoints").glob("step_*.pt"))) >= 5 else 1)
        meta = translator.corpus
        corpus = load_corpus(meta["spec"], **meta.get("load_options", {}))
        if args.heatmap:
            # the shortest test sentence of at least 10 subword pieces (ties: the first in the split)
            n = lambda s: len(translator.tokenizer.encode(translator.prepare(s)))
            sentence = min((s for s, _ in corpus.test if n(s) >= 10), key=n)
            ref = dict(corpus.test)[sentence]
            maps = translator.attention_maps(sentence)
            out["attention"] = {**maps, "reference": ref, "checkpoints": [c.name for c in translator.checkpoints],
                                "decoding": "beam 4, alpha 0.6"}
        if args.agreement:
            srcs = [s for s, _ in corpus.test[:args.agreement]]
            slow = Translator(run, avg=1, convert=False)
            fast = Translator(run, avg=1, convert=True)
            t0 = time.perf_counter()
            a = slow.translate(srcs, greedy=True)
            t1 = time.perf_counter()
            b = fast.translate(srcs, greedy=True)
            t2 = time.perf_counter()
            out["conversion_check"] = {
                "what": "greedy decoding of the first N test sentences with nn.Transformer itself (prefix recomputed) "
                        "and with its weights copied into our EncoderDecoder (KV cache)",
                "sentences": len(srcs), "identical": sum(x == y for x, y in zip(a, b)),
                "seconds_nn_transformer": round(t1 - t0, 1), "seconds_converted": round(t2 - t1, 1)}
    dest = REPO / "results" / f"{out['name']}.json"
    dest.parent.mkdir(exist_ok=True)
    dest.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {dest} ({dest.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
