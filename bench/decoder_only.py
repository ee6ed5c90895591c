"""Chapter 28's runs: a decoder-only language model on the English Bible, its modern block switch by switch, and
translation as a prefix language model; each run recorded as one small JSON file.

    python bench/decoder_only.py run lm_base --seed 0             # one run, one seed (several: --seed 0 1 2)
    python bench/decoder_only.py queue --plan bench/plans/decoder_only_lm.txt   # lines "NAME SEED", skip recorded
    python bench/decoder_only.py list                             # the runs this script knows, and their settings
    python bench/decoder_only.py table                            # the tables built from the records

Names: `lm_VARIANT` trains the language model of `VARIANTS` (the paper's block, each switch of the modern block,
and all of them together) on the English side of the reference split's German-English verses (chapter 14);
`mt_prefix` and `mt_causal` train one decoder-only model on "source BOS target EOS" sequences of the same split,
with the loss on the target only, and a prefix or a causal mask over the source: the recipe of chapter 25's
miniature encoder-decoder (`python bench/table3.py list`, scale mini) at its parameter count and update count.

Equal parameters: every variant's d_ff is chosen so that its parameter count is the nearest to the base's (for
SwiGLU that gives about 2/3 of the base's d_ff; for grouped-query attention a wider d_ff makes up for the narrower
W^K, W^V). Equal updates: every run of a kind has the same number of updates of the same batches.

The record (bench/results/decoder_only/NAME_sSEED.json) holds the settings, the provenance (command, commit,
device, torch, date, wall time), the parameter count, the curves and the scores. `--tiny` runs a few updates of
a tiny model on a few sentences (for the tests); its records go where --results says. Nothing here is a test;
tests/test_decoder_only.py tests it.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "decoder_only"
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))
from provenance import uncommitted  # noqa: E402  (bench/provenance.py)

# ------------------------------------------------------------------------------------------------ the runs
LM_BASE = dict(vocab=2000, N=2, d_model=128, d_ff=512, h=4, dropout=0.1, max_positions=256)
VARIANTS = {  # the switches of the modern block, each alone, then all together
    "base": ("the paper's block: post-norm LayerNorm, ReLU, sinusoids, multi-head", {}),
    "rmsnorm": ("pre-norm with RMSNorm", dict(norm_first=True, norm="rms")),
    "swiglu": ("SwiGLU feed-forward", dict(feed_forward="swiglu")),
    "rope": ("rotary positions (RoPE)", dict(positional="rope")),
    "gqa": ("grouped-query attention, 1 key/value head for 4 query heads", dict(n_kv_heads=1)),
    "modern": ("all four", dict(norm_first=True, norm="rms", feed_forward="swiglu", positional="rope",
                                n_kv_heads=1)),
}
# the LM recipe: updates of BATCH sequences of SEQ_LEN + 1 tokens cut from the verses read one after another
LM_RECIPE = dict(steps=300, batch=32, seq_len=64, warmup=100, lr_factor=1.0, eval_every=50, vocab_size=2000)
SAMPLING = [dict(temperature=0.0), dict(temperature=0.7), dict(temperature=1.0), dict(temperature=1.3),
            dict(temperature=1.0, top_p=0.9), dict(temperature=1.0, top_k=40)]
N_SAMPLES = 32  # samples per setting, for the measures; the record keeps the first three texts

# translation: chapter 25's miniature (bench/table3.py, scale mini) and its base records
MT_ARMS = {"prefix": "prefix mask: the source positions see each other", "causal": "causal mask everywhere"}
MT_RECIPE = dict(vocab_size=4000, max_subwords=128, max_tokens=2000, warmup=400, steps=600, eval_every=100,
                 label_smoothing=0.1, lr_factor=1.0)
MT_MODEL = dict(N=4, d_model=128, h=8, dropout=0.1, inner_dropout=True, max_positions=512)
ENC_DEC_PARAMETERS = 1_441_696  # mini base (bench/results/table3/mini_base_s0.json), checked by the tests
TINY = dict(sentences=200, steps=4, eval_every=2, batch=4, seq_len=16, vocab_size=400, d_model=32, samples=2)


def names() -> list[str]:
    return [f"lm_{v}" for v in VARIANTS] + [f"mt_{a}" for a in MT_ARMS]


# ------------------------------------------------------------------------------------------------ models
def lm_config(variant: str, vocab: int, base: dict | None = None):
    "The LMConfig of VARIANT, with the d_ff that brings its parameters nearest to the base's."
    from annotated_transformer.decoder_only import LMConfig
    base = dict(LM_BASE if base is None else base, vocab=vocab)
    switches = VARIANTS[variant][1]
    target = count(LMConfig(**base))
    return equalised(LMConfig(**base, **switches), target)


def count(config) -> int:
    "Parameters of the model CONFIG describes (shared ones once), built on the meta device."
    import torch
    from annotated_transformer.decoder_only import DecoderOnlyLM
    with torch.device("meta"):
        return sum(p.numel() for p in DecoderOnlyLM(config).parameters())


def equalised(config, target: int):
    "CONFIG with the d_ff whose parameter count is the nearest to TARGET (the count is linear in d_ff)."
    a, b = count(dataclasses.replace(config, d_ff=1)), count(dataclasses.replace(config, d_ff=2))
    guess = max(1, round((target - a) / (b - a)) + 1)
    candidates = [dataclasses.replace(config, d_ff=f) for f in (guess - 1, guess, guess + 1) if f >= 1]
    return min(candidates, key=lambda c: (abs(count(c) - target), c.d_ff))


# ------------------------------------------------------------------------------------------------ data
def english_verses(split: str) -> list[str]:
    "The English side of the reference split bible-de-en (chapter 14)."
    from annotated_transformer.reference import load_reference_split
    corpus = load_reference_split("bible-de-en")
    return [tgt for _, tgt in getattr(corpus, split)]


def stream(tokenizer, verses: list[str]):
    "The verses as one stream of ids: BOS verse EOS BOS verse EOS ..."
    import torch
    from annotated_transformer.batching import BOS, EOS
    ids = [i for ids in tokenizer.encode_batch(verses) for i in [BOS, *ids, EOS]]
    return torch.tensor(ids, dtype=torch.long)


def windows(ids, seq_len: int):
    "(n, seq_len + 1): the stream cut into consecutive windows, the last partial one left out."
    n = (len(ids) - 1) // seq_len
    return ids[: n * seq_len + 1].unfold(0, seq_len + 1, seq_len)


# ------------------------------------------------------------------------------------------------ provenance
def _git(*args) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()


def provenance(started: float, command: list[str], threads: int, changes: dict | None = None) -> dict:
    "Where and how a run ran; CHANGES: what differed from the commit when it started (provenance.uncommitted)."
    import torch
    from provenance import cpu_name
    return {**({"uncommitted": changes} if changes else {}),"command": shlex.join(["python", "bench/decoder_only.py", *command]),
            "commit": _git("rev-parse", "--short", "HEAD") or None,
            "modified": bool(_git("status", "--porcelain", "--", "annotated_transformer", "bench/decoder_only.py")),
            "device": f"cpu ({cpu_name()}), {threads} thread" + ("s" if threads > 1 else ""),
            "torch": torch.__version__, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "wall_seconds": round(time.time() - started, 1)}


# ------------------------------------------------------------------------------------------------ LM runs
@dataclasses.dataclass
class LMData:
    tokenizer: object
    train: object  # (n, seq_len + 1) windows
    dev: object
    sizes: dict


def lm_data(tiny: bool) -> LMData:
    from annotated_transformer.subwords import train_tokenizer
    train_v, dev_v = english_verses("train"), english_verses("dev")
    if tiny:
        train_v, dev_v = train_v[:TINY["sentences"]], dev_v[:TINY["sentences"] // 4]
    vocab = TINY["vocab_size"] if tiny else LM_RECIPE["vocab_size"]
    tok = train_tokenizer(train_v, vocab, num_threads=1)
    seq_len = TINY["seq_len"] if tiny else LM_RECIPE["seq_len"]
    train_ids, dev_ids = stream(tok, train_v), stream(tok, dev_v)
    return LMData(tok, windows(train_ids, seq_len), windows(dev_ids, seq_len),
                  {"train_verses": len(train_v), "dev_verses": len(dev_v), "train_tokens": len(train_ids),
                   "dev_tokens": len(dev_ids), "vocab_size": tok.vocab_size})


def dev_nll(model, windows_, batch: int = 64) -> float:
    "Mean negative log-likelihood per predicted token over the dev windows, in eval mode."
    import torch
    from annotated_transformer.decoder_only import lm_nll
    model.eval()
    total = count_ = 0
    with torch.no_grad():
        for i in range(0, len(windows_), batch):
            nll, n = lm_nll(model, windows_[i:i + batch])
            total, count_ = total + nll.item(), count_ + n.item()
    model.train()
    return total / count_


def measure_samples(model, tok, seed: int, n: int, max_new: int = 60) -> list[dict]:
    "For each sampling setting: N samples of one verse (prompt BOS, stop at EOS), their measures, three texts."
    import statistics
    import torch
    from annotated_transformer.batching import BOS, EOS
    from annotated_transformer.decoder_only import distinct_n, generate, repetition_rate
    out = []
    for setting in SAMPLING:
        g = torch.Generator().manual_seed(seed)
        prompt = torch.full((n, 1), BOS, dtype=torch.long)
        ids = generate(model, prompt, max_new, generator=g, eos=EOS, **setting)[:, 1:].tolist()
        texts = [tok.decode(s[: s.index(EOS)] if EOS in s else s) for s in ids]
        words = [t.split() for t in texts]
        out.append({**setting, "samples": n, "seed": seed,
                    "repetition_rate_4": round(statistics.mean(repetition_rate(w, 4) for w in words), 4),
                    "distinct_1": round(distinct_n(words, 1), 4), "distinct_2": round(distinct_n(words, 2), 4),
                    "mean_words": round(statistics.mean(len(w) for w in words), 1),
                    "ended": sum(EOS in s for s in ids), "texts": texts[:3]})
    return out


def run_lm(variant: str, seed: int, results: Path, tiny: bool, command: list[str]) -> Path:
    import torch
    from annotated_transformer.decoder_only import DecoderOnlyLM, lm_nll
    from annotated_transformer.loss import make_optimizer
    started, changes = time.time(), uncommitted()
    torch.set_num_threads(1)
    data = lm_data(tiny)
    recipe = dict(LM_RECIPE, **({k: TINY[k] for k in ("steps", "eval_every", "batch", "seq_len")} if tiny else {}))
    base = dict(LM_BASE, d_model=TINY["d_model"], d_ff=4 * TINY["d_model"]) if tiny else LM_BASE
    config = lm_config(variant, data.tokenizer.vocab_size, base)
    torch.manual_seed(seed)
    model = DecoderOnlyLM(config)
    optimizer, scheduler = make_optimizer(model, config.d_model, recipe["warmup"], recipe["lr_factor"])
    order = torch.Generator().manual_seed(seed)  # which windows make each batch
    perm, used, train_curve, dev_curve = torch.randperm(len(data.train), generator=order), 0, [], []
    for step in range(1, recipe["steps"] + 1):
        if used + recipe["batch"] > len(perm):
            perm, used = torch.randperm(len(data.train), generator=order), 0
        batch = data.train[perm[used:used + recipe["batch"]]]
        used += recipe["batch"]
        nll, n = lm_nll(model, batch)
        optimizer.zero_grad()
        (nll / n).backward()
        optimizer.step()
        scheduler.step()
        train_curve.append({"step": step, "nll": round(nll.item() / n.item(), 4)})
        if step % recipe["eval_every"] == 0 or step == recipe["steps"]:
            d = dev_nll(model, data.dev)
            dev_curve.append({"step": step, "dev_nll": round(d, 4), "dev_ppl": round(math.exp(d), 3)})
            print(f"{variant} s{seed} step {step}: train {train_curve[-1]['nll']:.3f}, dev ppl {math.exp(d):.2f}",
                  flush=True)
    train_seconds = time.time() - started
    samples = measure_samples(model, data.tokenizer, seed, TINY["samples"] if tiny else N_SAMPLES,
                              12 if tiny else 60)
    record = {"name": f"lm_{variant}_s{seed}", "kind": "lm", "variant": variant, "change": VARIANTS[variant][0],
              "seed": seed, "tiny": tiny, "settings": dataclasses.asdict(config), "recipe": recipe,
              "parameters": sum(p.numel() for p in model.parameters()),
              "tokens_per_update": recipe["batch"] * recipe["seq_len"], "data": data.sizes,
              "train_seconds": round(train_seconds, 1),
              "train_curve": train_curve[:: max(1, recipe["steps"] // 60)] + train_curve[-1:],
              "dev_curve": dev_curve, "dev_nll": dev_curve[-1]["dev_nll"], "dev_ppl": dev_curve[-1]["dev_ppl"],
              "sampling": samples, "provenance": provenance(started, command, 1, changes)}
    return write(record, results)


def write(record: dict, results: Path) -> Path:
    results.mkdir(parents=True, exist_ok=True)
    dest = results / f"{record['name']}.json"
    tmp = dest.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, dest)
    print(f"wrote {dest}: dev ppl {record['dev_ppl']:.2f}, {record['provenance']['wall_seconds']:.0f} s")
    return dest


# ------------------------------------------------------------------------------------------------ translation
def mt_data(tiny: bool) -> dict:
    "The reference split's German-English pairs as ids, with the joint BPE that chapter 25's miniature learns."
    from annotated_transformer.reference import load_reference_split
    from annotated_transformer.subwords import encode_pairs, train_tokenizer
    corpus = load_reference_split("bible-de-en")
    train, dev, test = corpus.train, corpus.dev, corpus.test
    if tiny:
        train, dev, test = train[:TINY["sentences"]], dev[:20], test[:6]
    tok = train_tokenizer(train, TINY["vocab_size"] if tiny else MT_RECIPE["vocab_size"], num_threads=1)
    m = MT_RECIPE["max_subwords"]
    return {"tokenizer": tok, "train": encode_pairs(train, tok, max_subwords=m),
            "dev": encode_pairs(dev, tok, max_subwords=m), "test": test}


def mt_batch(pairs: list, arm: str):
    """(tokens, targets, mask) of pairs (source ids, target ids): rows "source BOS target EOS", padded; targets are
    the next tokens with the source's PAD-ed out (no loss there); the mask is the arm's, or None (causal)."""
    import torch
    from annotated_transformer.batching import BOS, EOS, PAD
    from annotated_transformer.decoder_only import prefix_mask
    rows = [[*s, BOS, *t, EOS] for s, t in pairs]
    width = max(map(len, rows))
    tokens = torch.tensor([r + [PAD] * (width - len(r)) for r in rows], dtype=torch.long)
    targets = tokens[:, 1:].clone()
    prefix = torch.tensor([len(s) + 1 for s, _ in pairs])  # the source and BOS
    position = torch.arange(width - 1)
    targets[position[None, :] < (prefix - 1)[:, None]] = PAD  # predictions of source tokens: not scored
    mask = prefix_mask(prefix, width - 1) if arm == "prefix" else None
    return tokens, targets, mask


def mt_dev_nll(model, pairs, arm: str, max_tokens: int) -> float:
    "NLL per target token (no smoothing) of the dev pairs, as the trainer's evaluation counts it."
    import torch
    from annotated_transformer.batching import PAD
    from annotated_transformer.sampler import TokenBatchSampler
    from annotated_transformer.decoder_only import lm_nll
    model.eval()
    total = n_tokens = 0
    with torch.no_grad():
        for indices in TokenBatchSampler(pairs, max_tokens, shuffle=False).epoch_batches(0):
            tokens, targets, mask = mt_batch([pairs[i] for i in indices], arm)
            nll, n = lm_nll(model, tokens, mask, targets, ignore=PAD)
            total, n_tokens = total + nll.item(), n_tokens + n.item()
    model.train()
    return total / n_tokens


def mt_greedy(model, tok, test: list, arm: str, extra: int = 50) -> list[str]:
    "Greedy translations of the test sources (prompt 'source BOS', at most source length + EXTRA new tokens)."
    import torch
    from annotated_transformer.batching import BOS, EOS
    from annotated_transformer.decoder_only import generate
    sources = tok.encode_batch([s for s, _ in test])
    out = [""] * len(test)
    by_length = {}
    for i, s in enumerate(sources):  # one batch per source length: no padding inside a prompt
        by_length.setdefault(len(s), []).append(i)
    for length, rows in by_length.items():
        prompt = torch.tensor([[*sources[i], BOS] for i in rows], dtype=torch.long)
        ids = generate(model, prompt, length + extra, temperature=0, eos=EOS, prefix=arm == "prefix")
        for i, row in zip(rows, ids[:, length + 1:].tolist()):
            out[i] = tok.decode(row[: row.index(EOS)] if EOS in row else row)
    return out


def beam_translate(model, prompt: list[int], arm: str, k: int = 4, alpha: float = 0.6, extra: int = 50) -> list[int]:
    """Beam search for a decoder-only model, with the settings of chapter 11's `beam_search` (k 4, GNMT length
    penalty alpha 0.6, at most source length + EXTRA tokens): K rows share the prompt's cache, reordered each step;
    a hypothesis ends at EOS with the score log p / lp(|Y|); the search stops when K have ended."""
    import torch
    from annotated_transformer.batching import EOS
    from annotated_transformer.decoder_only import prefix_mask
    from annotated_transformer.decoding import gnmt_length_penalty
    n = len(prompt)
    caches = model.new_caches(n + extra + 1)
    mask = prefix_mask(torch.tensor([n if arm == "prefix" else 1]), n)
    with torch.no_grad():
        log_p = model.generator(model(torch.tensor([prompt]), mask, caches)[:, -1])  # (1, V)
        hyps, scores, finished = [[]], torch.zeros(1, dtype=log_p.dtype), []
        for _ in range(n - 1 + extra):
            top = (scores[:, None] + log_p).flatten().topk(2 * k)
            rows, tokens, kept = [], [], []
            for score, index in zip(top.values.tolist(), top.indices.tolist()):
                if len(rows) == k:  # EOS below the k best continuations does not end a hypothesis
                    break
                row, token = divmod(index, log_p.size(1))
                if token == EOS:
                    finished.append((score / gnmt_length_penalty(len(hyps[row]) + 1, alpha), hyps[row]))
                else:
                    rows, tokens, kept = rows + [row], tokens + [token], kept + [score]
            if len(finished) >= k or not rows:
                break
            for cache in caches:  # each row continues the row it came from
                cache.reorder(torch.tensor(rows))
            hyps = [hyps[r] + [t] for r, t in zip(rows, tokens)]
            scores = torch.tensor(kept, dtype=log_p.dtype)
            log_p = model.generator(model(torch.tensor(tokens)[:, None], None, caches)[:, -1])
    if not finished:  # none ended within the limit: the best unfinished one
        finished = [(s / gnmt_length_penalty(len(h), alpha), h) for s, h in zip(scores.tolist(), hyps)]
    return max(finished, key=lambda f: f[0])[1]


def averaged(model, snapshots: list[dict]):
    "A copy of MODEL with the mean of the state dicts SNAPSHOTS (checkpoint averaging, §6.1)."
    import copy
    out = copy.deepcopy(model)
    out.load_state_dict({k: sum(s[k] for s in snapshots) / len(snapshots) for k in snapshots[0]})
    return out.eval()


def mt_config(vocab: int, tiny: bool):
    "The decoder-only model with the parameters of chapter 25's miniature encoder-decoder (d_ff equalised)."
    from annotated_transformer.decoder_only import LMConfig
    if tiny:
        return LMConfig(vocab=vocab, N=1, d_model=TINY["d_model"], d_ff=64, h=4, max_positions=512)
    return equalised(LMConfig(vocab=vocab, d_ff=512, **MT_MODEL), ENC_DEC_PARAMETERS)


def run_mt(arm: str, seed: int, results: Path, tiny: bool, command: list[str]) -> Path:
    import torch
    from annotated_transformer.batching import PAD
    from annotated_transformer.sampler import TokenBatchSampler
    from annotated_transformer.decoder_only import DecoderOnlyLM
    from annotated_transformer.loss import LabelSmoothingLoss, make_optimizer
    started, changes = time.time(), uncommitted()
    torch.set_num_threads(1)
    data = mt_data(tiny)
    recipe = dict(MT_RECIPE, **({k: TINY[k] for k in ("steps", "eval_every")} if tiny else {}))
    config = mt_config(data["tokenizer"].vocab_size, tiny)
    torch.manual_seed(seed)
    model = DecoderOnlyLM(config)
    optimizer, scheduler = make_optimizer(model, config.d_model, recipe["warmup"], recipe["lr_factor"])
    criterion = LabelSmoothingLoss(config.vocab, PAD, recipe["label_smoothing"], reduction="sum")
    sampler = TokenBatchSampler(data["train"], recipe["max_tokens"], seed=seed)  # chapter 08's batches
    plan, epoch, dev_curve, seen = [], 0, [], {"tokens": 0, "target_tokens": 0}
    snapshots, every = [], max(1, recipe["steps"] // 30)  # 20 updates apart, as the miniature's checkpoints
    for step in range(1, recipe["steps"] + 1):
        if not plan:
            plan, epoch = list(sampler.epoch_batches(epoch)), epoch + 1
        tokens, targets, mask = mt_batch([data["train"][i] for i in plan.pop(0)], arm)
        n = (targets != PAD).sum()
        seen["tokens"] += int((tokens != PAD).sum())
        seen["target_tokens"] += int(n)
        loss = criterion(model.generator(model(tokens[:, :-1], mask)), targets) / n
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if step % every == 0 and step > recipe["steps"] - 5 * every:  # the last 5 "checkpoints", in memory
            snapshots.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        if step % recipe["eval_every"] == 0 or step == recipe["steps"]:
            d = mt_dev_nll(model, data["dev"], arm, recipe["max_tokens"])
            dev_curve.append({"step": step, "dev_nll": round(d, 4), "dev_ppl": round(math.exp(d), 3)})
            print(f"mt_{arm} s{seed} step {step}: dev ppl {math.exp(d):.2f}", flush=True)
    train_seconds = time.time() - started
    model.eval()
    tok = data["tokenizer"]
    scores = {"greedy": score(mt_greedy(model, tok, data["test"], arm), data["test"])}
    avg, started_beam = averaged(model, snapshots), time.time()
    from annotated_transformer.batching import BOS, EOS
    beams = [beam_translate(avg, [*ids, BOS], arm) for ids in tok.encode_batch([s for s, _ in data["test"]])]
    scores["beam4_avg5"] = score([tok.decode(h) for h in beams], data["test"])
    scores["beam4_avg5"].update(checkpoints=len(snapshots), decode_seconds=round(time.time() - started_beam, 1))
    steps = recipe["steps"]
    record = {"name": f"mt_{arm}_s{seed}", "kind": "translation", "arm": arm, "change": MT_ARMS[arm],
              "seed": seed, "tiny": tiny, "settings": dataclasses.asdict(config), "recipe": recipe,
              "parameters": sum(p.numel() for p in model.parameters()),
              "encoder_decoder_parameters": ENC_DEC_PARAMETERS,
              "tokens_per_update": round(seen["tokens"] / steps, 1),
              "target_tokens_per_update": round(seen["target_tokens"] / steps, 1),
              "train_seconds": round(train_seconds, 1), "dev_curve": dev_curve,
              "dev_nll": dev_curve[-1]["dev_nll"], "dev_ppl": dev_curve[-1]["dev_ppl"],
              **scores, "provenance": provenance(started, command, 1, changes)}
    return write(record, results)


def score(hyps: list[str], test: list) -> dict:
    "BLEU and chrF of HYPS against the test pairs' targets (sacrebleu, detokenized text), with two samples."
    import sacrebleu
    refs = [t for _, t in test]
    bleu, chrf = sacrebleu.metrics.BLEU(), sacrebleu.metrics.CHRF()
    b, c = bleu.corpus_score(hyps, [refs]), chrf.corpus_score(hyps, [refs])
    return {"bleu": b.score, "bleu_text": str(b), "bleu_signature": str(bleu.get_signature()), "chrf": c.score,
            "chrf_signature": str(chrf.get_signature()), "sentences": len(refs),
            "samples": [{"source": s, "reference": r, "output": h} for (s, r), h in list(zip(test, hyps))[:2]]}


# ------------------------------------------------------------------------------------------------ collecting
def load_records(results: Path = RESULTS, kind: str | None = None) -> list[dict]:
    """The records in RESULTS (of one kind: 'lm' or 'translation'), by name then seed; tiny runs, and the records
    bench/provenance_audit.py excludes, left out."""
    from provenance_audit import excluded
    gone = {(REPO / e).resolve() for e in excluded()}
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(results).glob("*.json"))
               if p.resolve() not in gone]
    return sorted([r for r in records if not r.get("tiny") and (kind is None or r["kind"] == kind)],
                  key=lambda r: (names().index(r["name"].rsplit("_s", 1)[0]), r["seed"]))


def by_seed(records: list[dict], name: str, key: str = "dev_ppl") -> dict[int, float]:
    "{seed: value} of the runs of NAME (e.g. lm_base)."
    return {r["seed"]: r[key] for r in records if r["name"].rsplit("_s", 1)[0] == name}


SAME = 0.01  # "the same": the whole interval within 1 % of the base's perplexity (chapter 25's resolution)


def lm_table(records: list[dict]) -> list[dict]:
    """Per LM variant: seeds, parameters, mean dev perplexity, and its difference from the base ('vs_base'): chapter
    25's randomized-block model over every variant and seed (`stats.block`), with its verdict ('raw_verdict': better,
    worse, same within SAME of the base's perplexity, or inconclusive) and the verdict after Holm's adjustment over
    the variants ('verdict': 'suggestive' where a decided one does not survive)."""
    import statistics
    from stats import adjusted_verdicts, block, holm, verdict, verdict_p
    table = {v: by_seed(records, f"lm_{v}") for v in VARIANTS}
    table = {v: runs for v, runs in table.items() if runs}
    fitted = block(table, "base") if len(table.get("base", {})) >= 2 and len(table) > 1 else {}
    margin = SAME * statistics.mean(table["base"].values()) if "base" in table else None
    lines = []
    for v in VARIANTS:
        runs = table.get(v, {})
        line = {"variant": v, "change": VARIANTS[v][0], "seeds": sorted(runs)}
        if runs:
            line["parameters"] = next(r["parameters"] for r in records if r["name"] == f"lm_{v}_s{min(runs)}")
            line["dev_ppl"] = statistics.mean(runs.values())
        if v in fitted:
            iv = fitted[v]
            line.update(vs_base=iv, raw_verdict=verdict(iv, "not in paper", margin, lower_is_better=True),
                        p=verdict_p(iv, "not in paper", margin, lower_is_better=True))
        lines.append(line)
    judged = [line for line in lines if "vs_base" in line]
    for line, word, p in zip(judged, adjusted_verdicts([x["raw_verdict"] for x in judged], [x["p"] for x in judged]),
                             holm([x["p"] for x in judged])):
        line.update(verdict=word, p_holm=p)
    return lines


def lm_spread_check(records: list[dict]) -> dict:
    """The block model's one assumption the seeds can check (chapter 25's check): that every variant's differences
    from the base, seed by seed, spread alike. Bartlett's test of equal variances over the variants paired with the
    base on two or more seeds (scipy), and the largest variance over the smallest; {} with fewer than two."""
    from stats import differences, equal_spreads
    table = {v: by_seed(records, f"lm_{v}") for v in VARIANTS}
    base = table.pop("base", {})
    diffs = {v: differences(base, runs) for v, runs in table.items() if len(set(runs) & set(base)) >= 2}
    if len(diffs) < 2:
        return {}
    return {"variants": len(diffs), "df_each": min(len(d) for d in diffs.values()) - 1, **equal_spreads(diffs)}


# ------------------------------------------------------------------------------------------------ command line
def run(name: str, seed: int, results: Path = RESULTS, tiny: bool = False, overwrite: bool = False,
        command: list[str] | None = None) -> Path:
    if name not in names():
        raise ValueError(f"unknown run {name!r}: choose one of {', '.join(names())}")
    dest = results / f"{name}_s{seed}.json"
    if dest.exists() and not overwrite:
        print(f"{dest} exists: skipped (--overwrite to run it again)")
        return dest
    command = command or ["run", name, "--seed", str(seed)] + (["--tiny"] if tiny else [])
    kind, what = name.split("_", 1)
    return (run_lm if kind == "lm" else run_mt)(what, seed, results, tiny, command)


def read_plan(path: Path) -> list[tuple[str, int]]:
    "Lines 'NAME SEED' ('#' starts a comment); every name known, every seed an integer."
    plan = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or words[0] not in names() or not words[1].isdigit():
            raise ValueError(f"{path}:{number}: expected 'NAME SEED' with NAME one of {', '.join(names())}, "
                             f"got {line.strip()!r}")
        plan.append((words[0], int(words[1])))
    return plan


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/decoder_only.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="train, score and record runs")
    r.add_argument("name", help=", ".join(names()))
    r.add_argument("--seed", type=int, nargs="+", default=[0])
    q = sub.add_parser("queue", help="run the lines 'NAME SEED' of a plan file that are not recorded yet")
    q.add_argument("--plan", type=Path, required=True)
    for s in (r, q):
        s.add_argument("--results", type=Path, default=RESULTS)
        s.add_argument("--tiny", action="store_true", help="a few updates of a tiny model (for the tests)")
        s.add_argument("--overwrite", action="store_true")
    sub.add_parser("list", help="the runs and their settings")
    sub.add_parser("table", help="the table of the recorded LM runs")
    args = p.parse_args(argv)
    prog = "bench/decoder_only.py"
    try:
        if args.what == "run":
            for seed in args.seed:
                run(args.name, seed, args.results, args.tiny, args.overwrite,
                    ["run", args.name, "--seed", str(seed)] + (["--tiny"] if args.tiny else []))
        elif args.what == "queue":
            for name, seed in read_plan(args.plan):
                run(name, seed, args.results, args.tiny, args.overwrite,
                    ["run", name, "--seed", str(seed)] + (["--tiny"] if args.tiny else []))
        elif args.what == "list":
            for v, (change, _) in VARIANTS.items():
                c = lm_config(v, LM_RECIPE["vocab_size"])
                print(f"lm_{v:8} {change}: d_ff {c.d_ff}, {count(c):,} parameters")
            print("lm recipe:", LM_RECIPE)
            c = mt_config(MT_RECIPE["vocab_size"], False)
            for arm, change in MT_ARMS.items():
                print(f"mt_{arm:8} {change}: N {c.N}, d_ff {c.d_ff}, {count(c):,} parameters "
                      f"(encoder-decoder: {ENC_DEC_PARAMETERS:,})")
            print("mt recipe:", MT_RECIPE)
        else:
            for line in lm_table(load_records(kind="lm")):
                diff = line["vs_base"].text(2) if "vs_base" in line else ""
                ppl = f"{line['dev_ppl']:.2f}" if "dev_ppl" in line else "not run"
                print(f"{line['variant']:8} seeds {line['seeds']}: dev ppl {ppl} {diff}")
    except (ValueError, OSError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
