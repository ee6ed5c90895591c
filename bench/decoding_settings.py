"""When do beam search and checkpoint averaging help? Score one run under several decoding settings.

    python bench/decoding_settings.py RUN --split dev --avg 1 5 --alpha 0.6 1.0 --beam 4 --out results/NAME.json

For every combination of --avg (the last K checkpoints of RUN averaged) and decoding (greedy, and beam search
with each --beam and --alpha), it translates the split with `Translator` and records BLEU and chrF (sacrebleu,
with signatures), BLEU's brevity penalty and length ratio, and the time taken. Choose settings on the dev split,
then score the test split once with the chosen ones (`annotated-transformer evaluate`).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import cpu_name  # noqa: E402

from annotated_transformer.translate import Translator, evaluate_translator  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", type=Path)
    p.add_argument("--split", default="dev", choices=["dev", "test"])
    p.add_argument("--limit", type=int, default=None, help="only the first N sentences of the split")
    p.add_argument("--avg", type=int, nargs="+", default=[1, 5])
    p.add_argument("--beam", type=int, nargs="+", default=[4])
    p.add_argument("--alpha", type=float, nargs="+", default=[0.6, 1.0])
    p.add_argument("--no-greedy", action="store_true")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = []
    for avg in args.avg:
        translator = Translator(args.run, avg=avg)
        settings = [] if args.no_greedy else [dict(greedy=True)]
        settings += [dict(beam_size=k, length_penalty=a) for k in args.beam for a in args.alpha]
        for s in settings:
            start = time.perf_counter()
            r = evaluate_translator(translator, args.split, args.limit, samples=0, **s)
            m = re.search(r"BP = ([\d.]+) ratio = ([\d.]+)", r["bleu"]["text"])
            row = {"avg": avg, "checkpoints": r["checkpoints"], "decoding": r["decoding"],
                   "bleu": round(r["bleu"]["score"], 2), "chrf": round(r["chrf"]["score"], 2),
                   "bp": float(m.group(1)), "ratio": float(m.group(2)), "bleu_text": r["bleu"]["text"],
                   "seconds": round(time.perf_counter() - start, 1)}
            rows.append(row)
            print(json.dumps({k: row[k] for k in ("avg", "decoding", "bleu", "chrf", "bp", "ratio", "seconds")}),
                  flush=True)
    record = {"run": str(args.run), "split": args.split, "limit": args.limit, "sentences": r["sentences"],
              "bleu_signature": r["bleu"]["signature"], "chrf_signature": r["chrf"]["signature"], "rows": rows,
              "command": " ".join(["python", "bench/decoding_settings.py", *(sys.argv[1:] if argv is None else argv)]),
              "device": f"cpu ({cpu_name()}), {args.threads} thread(s)", "torch": torch.__version__,
              "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
