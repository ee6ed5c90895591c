"""Replay recorded runs at the current commit and compare: did the code that made a record make it?

A record whose provenance says `modified: true` was made from a working tree with uncommitted changes, and the diff
was not kept. Replaying the run from a clean checkout answers the question that matters for the book: does the
committed code give the same numbers? Each replay runs the record's own recipe, seed and data, one thread, and
compares, at the precision the record keeps:

- chapter 25's miniature runs (`bench/results/table3*/`): the first STEPS updates of the record's own `train`
  command (the learning-rate schedule does not depend on the total), its train curve (loss, nll, lr at 5 significant
  digits) and its dev perplexity at the evaluations inside those updates;
- chapter 28's language models (`lm_*`): the whole run (300 updates, about two minutes), every number of the record
  except its times;
- chapter 28's translation runs (`mt_*`): the first STEPS updates (multiple of 100), the dev curve inside them.

    python bench/replay.py bench/results/table3/mini_C_N2_s2.json ... --json bench/results/replay/table3.json

With `--checkout DIR` the replay runs the code of DIR, e.g. `git worktree add DIR COMMIT` at the record's own
commit: the test of whether that commit, clean, made the record.

The JSON holds, for each record, its commit and `modified` flag, the commit and cleanliness of the replay, the
numbers compared and whether every one of them is equal at the record's precision. An equal replay of the first
updates shows those updates equal, not the run: chapter 25's seven seed-2 records whose first 40 updates replayed
equal were run again from a clean checkout all the same, and the new runs parted from the old ones between update
60 and 140 (`before_and_after` in bench/results/provenance_audit.json).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT  # the checkout whose code replays (--checkout): the package and bench/ scripts are imported from it


def _sig(x: float, digits: int = 5) -> float:
    return float(f"{x:.{digits}g}")


def _compare(pairs: list[tuple[str, float, float]]) -> dict:
    "[(what, recorded, replayed)] -> the comparison: every pair, the largest difference, all equal or not."
    rows = [{"what": w, "recorded": a, "replayed": b} for w, a, b in pairs]
    diff = max((abs(a - b) for _, a, b in pairs), default=math.nan)
    return {"compared": rows, "n_compared": len(rows), "max_abs_difference": diff,
            "equal": bool(rows) and all(a == b for _, a, b in pairs)}


def replay_table3(record: dict, steps: int, work: Path) -> dict:
    args = shlex.split(record["commands"]["train"])
    if args[:2] != ["annotated-transformer", "train"]:
        raise SystemExit(f"{record['name']}: unexpected train command {args[:2]}")
    args = args[2:]
    out = work / record["name"]
    args[args.index("--steps") + 1] = str(steps)
    args[args.index("--out") + 1] = str(out)
    env = {**os.environ, "PYTHONPATH": str(CODE)}
    subprocess.run([sys.executable, "-m", "annotated_transformer.cli", "train", *args], check=True,
                   stdout=subprocess.DEVNULL, env=env, cwd=CODE)
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    train = {m["step"]: m for m in metrics if "loss" in m}
    dev = {m["step"]: m for m in metrics if "dev_loss" in m}
    pairs = []
    for row in record["train_curve"]:
        if row["step"] <= steps:
            for k in ("loss", "nll", "lr"):
                pairs.append((f"train {k} @ {row['step']}", row[k], _sig(train[row["step"]][k])))
    for row in record["dev_curve"]:
        if row["step"] <= steps:
            pairs.append((f"dev nll @ {row['step']}", row["dev_nll"], round(dev[row["step"]]["dev_nll"], 4)))
    return {"replayed": f"the first {steps} updates of the record's train command", **_compare(pairs)}


def replay_lm(record: dict, work: Path) -> dict:
    import decoder_only
    path = decoder_only.run_lm(record["variant"], record["seed"], work, False, ["replay"])
    new = json.loads(path.read_text())
    pairs = [(f"train nll @ {a['step']}", a["nll"], b["nll"]) for a, b in zip(record["train_curve"], new["train_curve"])]
    pairs += [(f"dev nll @ {a['step']}", a["dev_nll"], b["dev_nll"]) for a, b in zip(record["dev_curve"], new["dev_curve"])]
    for a, b in zip(record["sampling"], new["sampling"]):
        for k in ("repetition_rate_4", "distinct_1", "distinct_2", "mean_words", "ended"):
            pairs.append((f"sampling {a.get('temperature')}/{a.get('top_k')}/{a.get('top_p')} {k}", a[k], b[k]))
    return {"replayed": "the whole run", **_compare(pairs)}


class _Enough(Exception):
    pass


def replay_mt(record: dict, steps: int) -> dict:
    import decoder_only
    if steps % 100:
        raise SystemExit("--steps must be a multiple of 100 for a translation run (its dev evaluations)")
    seen, original = [], decoder_only.mt_dev_nll

    def counting(*args, **kwargs):
        seen.append(round(original(*args, **kwargs), 4))
        if len(seen) * 100 >= steps:
            raise _Enough
        return seen[-1]

    decoder_only.mt_dev_nll = counting
    try:
        decoder_only.run_mt(record["arm"], record["seed"], Path(tempfile.mkdtemp()), False, ["replay"])
    except _Enough:
        pass
    finally:
        decoder_only.mt_dev_nll = original
    pairs = [(f"dev nll @ {a['step']}", a["dev_nll"], b) for a, b in zip(record["dev_curve"], seen)]
    return {"replayed": f"the first {steps} updates", **_compare(pairs)}


def checkout_commit() -> str:
    "The commit of the code that replays, marked when its working tree differs from it."
    git = lambda *a: subprocess.run(["git", "-C", str(CODE), *a], capture_output=True, text=True,
                                    check=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if git("status", "--porcelain") else "")


def replay(path: Path, steps: int, work: Path) -> dict:
    record = json.loads(path.read_text())
    started = time.time()
    if "commands" in record:
        result = replay_table3(record, steps, work)
    elif record.get("kind") == "lm":
        result = replay_lm(record, work)
    elif record.get("kind") == "translation":
        result = replay_mt(record, steps)
    else:
        raise SystemExit(f"{path}: not a record this script can replay")
    p = record["provenance"]
    return {"record": path.relative_to(ROOT).as_posix(), "record_commit": p.get("commit"),
            "record_modified": p.get("modified"), "replay_commit": checkout_commit(),
            "replay_date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "replay_seconds": round(time.time() - started, 1), **result}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+", type=Path)
    ap.add_argument("--steps", type=int, default=100, help="updates replayed of a miniature or translation run")
    ap.add_argument("--json", type=Path, required=True, help="the file the replays are added to")
    ap.add_argument("--checkout", type=Path, default=ROOT,
                    help="replay with the code of this checkout (a `git worktree` of the record's commit)")
    a = ap.parse_args(argv)
    global CODE
    CODE = a.checkout.resolve()
    sys.path[:0] = [str(CODE), str(CODE / "bench")]  # its package and its bench/ scripts, before any other
    import torch
    torch.set_num_threads(1)
    done = json.loads(a.json.read_text()) if a.json.exists() else {"replays": []}
    with tempfile.TemporaryDirectory() as work:
        for path in a.records:
            result = replay(path.resolve(), a.steps, Path(work))
            done["replays"] = [r for r in done["replays"] if r["record"] != result["record"]] + [result]
            a.json.write_text(json.dumps(done, indent=1) + "\n", encoding="utf-8")
            print(f"{result['record']}: {'equal' if result['equal'] else 'DIFFERENT'} "
                  f"({result['n_compared']} numbers, max |diff| {result['max_abs_difference']:.3g}, "
                  f"{result['replay_seconds']:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
