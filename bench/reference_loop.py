"""An independent plain-PyTorch translation loop: the yardstick for `annotated-transformer train`.

Uses torch, sentencepiece and sacrebleu only -- it must never import annotated_transformer, so that a bug in the
package's embeddings, initialization, batching, loss or loop cannot hide in the comparison. It follows the recipe
of the reference split (chapter 9a and 9b; the files come from `annotated-transformer reference-split --out DIR`):

* `torch.nn.Transformer` as PyTorch ships it (post-norm, with its final encoder/decoder LayerNorms), d_model 256,
  4 heads, 3+3 layers, d_ff 1024, dropout 0.1;
* one embedding matrix shared by source, target and the pre-softmax projection (no bias), N(0, d_model^-1/2)
  with the PAD row zero, scaled by sqrt(d_model); sinusoidal positions;
* a joint sentencepiece BPE vocabulary of 8,000 pieces trained on the training split;
* batches of length-sorted pairs whose padded *target* size (pairs x longest target) stays <= --max-tokens,
  batch order shuffled every epoch;
* nn.CrossEntropyLoss(label_smoothing=0.1) averaged over non-PAD target tokens; Adam (0.9, 0.98, 1e-9) with the
  schedule of §5.3; greedy decoding up to source length + 50; sacreBLEU and chrF on the test split.

    python bench/reference_loop.py --train T.tsv --dev D.tsv --test X.tsv --out runs/ref --steps 1000

It writes OUT/spm.model (reusable by the package: --data-option tokenizer=OUT/spm.model), OUT/log.jsonl and
OUT/result.json (dev perplexity curve, greedy BLEU/chrF with signatures, samples, provenance); with --save-model
also OUT/model.pt, the final weights.
"""
import argparse, io, json, math, platform, random, subprocess, sys, time
from pathlib import Path

import sacrebleu
import sentencepiece as spm
import torch
from torch import nn

PAD, BOS, EOS, UNK = 0, 1, 2, 3


def read_tsv(path):
    pairs = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        src, tgt = line.split("\t")[:2]
        pairs.append((src, tgt))
    return pairs


def train_spm(texts, vocab_size, coverage, path):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=model, vocab_size=vocab_size,
                                   model_type="bpe", character_coverage=coverage, pad_id=PAD, unk_id=UNK,
                                   bos_id=BOS, eos_id=EOS, num_threads=1, minloglevel=2)
    Path(path).write_bytes(model.getvalue())
    return spm.SentencePieceProcessor(model_proto=model.getvalue())


class Seq2Seq(nn.Module):
    def __init__(self, vocab, d, heads, layers, d_ff, dropout):
        super().__init__()
        self.d = d
        self.transformer = nn.Transformer(d, heads, layers, layers, d_ff, dropout, batch_first=True)
        self.embed = nn.Embedding(vocab, d)  # source, target and output projection share this matrix
        nn.init.normal_(self.embed.weight, std=d ** -0.5)
        with torch.no_grad():
            self.embed.weight[PAD].zero_()
        pos = torch.arange(4096).unsqueeze(1)
        angle = pos / 10000 ** (torch.arange(0, d, 2) / d)
        pe = torch.zeros(4096, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
        self.register_buffer("pe", pe)
        self.drop = nn.Dropout(dropout)

    def embed_positions(self, ids):
        return self.drop(self.embed(ids) * math.sqrt(self.d) + self.pe[: ids.size(1)])

    def encode(self, src):
        return self.transformer.encoder(self.embed_positions(src), src_key_padding_mask=src == PAD)

    def decode(self, memory, src, tgt_in):
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1), dtype=torch.bool)
        h = self.transformer.decoder(self.embed_positions(tgt_in), memory, tgt_mask=causal,
                                     tgt_key_padding_mask=tgt_in == PAD, memory_key_padding_mask=src == PAD)
        return h @ self.embed.weight.t()  # logits

    def forward(self, src, tgt_in):
        return self.decode(self.encode(src), src, tgt_in)


def make_optimizer(model, d_model, warmup):
    "Adam (0.9, 0.98, 1e-9) with the rate of §5.3: update n (counted from 1) gets d^-0.5 min(n^-0.5, n warmup^-1.5)."
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    lr = lambda s: d_model ** -0.5 * min((s + 1) ** -0.5, (s + 1) * warmup ** -1.5)
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lr)


def train_step(model, opt, sched, loss_fn, src, tgt_in, tgt_out):
    "One update; returns the loss (averaged over the non-PAD target tokens)."
    loss = loss_fn(model(src, tgt_in).flatten(0, 1), tgt_out.flatten())
    opt.zero_grad(); loss.backward(); opt.step(); sched.step()
    return loss


def pad_to(rows, width):
    return torch.tensor([r + [PAD] * (width - len(r)) for r in rows], dtype=torch.long)


def make_batches(data, max_tokens, rng):
    "Pairs sorted by (target, source) length, cut where pairs x longest target would exceed max_tokens."
    order = sorted(range(len(data)), key=lambda i: (len(data[i][1]), len(data[i][0]), rng.random()))
    batches, cur, longest = [], [], 0
    for i in order:
        t = len(data[i][1]) + 1
        if cur and (len(cur) + 1) * max(longest, t) > max_tokens:
            batches.append(cur)
            cur, longest = [], 0
        cur.append(i)
        longest = max(longest, t)
    batches.append(cur)
    return batches


def tensors(data, idx):
    src = [data[i][0] + [EOS] for i in idx]
    tgt_in = [[BOS] + data[i][1] for i in idx]
    tgt_out = [data[i][1] + [EOS] for i in idx]
    S, T = max(map(len, src)), max(map(len, tgt_in))
    return pad_to(src, S), pad_to(tgt_in, T), pad_to(tgt_out, T)


@torch.no_grad()
def dev_ppl(model, data, max_tokens):
    model.eval()
    nll, n = 0.0, 0
    for idx in make_batches(data, max_tokens, random.Random(0)):
        src, tgt_in, tgt_out = tensors(data, idx)
        logits = model(src, tgt_in)
        nll += nn.functional.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD,
                                           reduction="sum").item()
        n += int((tgt_out != PAD).sum())
    model.train()
    return math.exp(nll / n)


@torch.no_grad()
def greedy(model, sp, sentences, batch_size=64):
    model.eval()
    ids = [sp.encode(s) for s in sentences]
    out = [""] * len(ids)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    for k in range(0, len(order), batch_size):
        idx = order[k:k + batch_size]
        src = pad_to([ids[i] + [EOS] for i in idx], 1 + max(len(ids[i]) for i in idx))
        memory = model.encode(src)
        limit = [len(ids[i]) + 50 for i in idx]
        ys = torch.full((len(idx), 1), BOS)
        done = torch.zeros(len(idx), dtype=torch.bool)
        for step in range(max(limit)):
            nxt = model.decode(memory, src, ys)[:, -1].argmax(-1)
            nxt[done] = PAD
            ys = torch.cat([ys, nxt[:, None]], 1)
            done |= (nxt == EOS) | (torch.tensor(limit) <= step + 1)
            if done.all():
                break
        for i, row in zip(idx, ys[:, 1:].tolist()):
            row = row[: row.index(EOS)] if EOS in row else row
            out[i] = sp.decode([t for t in row if t != PAD])
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True); p.add_argument("--dev", required=True); p.add_argument("--test")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--steps", type=int, default=1000); p.add_argument("--seed", type=int, default=0)
    p.add_argument("--d-model", type=int, default=256); p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=3); p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--dropout", type=float, default=0.1); p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--warmup", type=int, default=1000); p.add_argument("--max-tokens", type=int, default=4000)
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--rebatch", action="store_true", help="cut the length-sorted batches anew every epoch (ties "
                   "broken at random), as the package's sampler does, instead of once (an ablation; off by default)")
    p.add_argument("--coverage", type=float, default=None, help="sentencepiece character coverage "
                   "(default 0.9995 if the text is mostly CJK, else 1.0)")
    p.add_argument("--eval-every", type=int, default=500); p.add_argument("--threads", type=int, default=1)
    p.add_argument("--test-limit", type=int, default=None, help="score only the first N test pairs")
    p.add_argument("--save-model", action="store_true", help="also write the final weights to OUT/model.pt "
                   "(for bench/stop_analysis.py; training is the same either way)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    random.seed(a.seed); torch.manual_seed(a.seed)
    a.out.mkdir(parents=True, exist_ok=True)
    train, dev = read_tsv(a.train), read_tsv(a.dev)
    texts = [s for pair in train for s in pair]
    if a.coverage is None:
        han = sum(1 for t in texts[:2000] for c in t if "\u4e00" <= c <= "\u9fff")
        a.coverage = 0.9995 if han > 0.01 * sum(len(t) for t in texts[:2000]) else 1.0
    sp = train_spm(texts, a.vocab, a.coverage, a.out / "spm.model")
    enc = lambda pairs: [(sp.encode(s), sp.encode(t)) for s, t in pairs]
    train_ids, dev_ids = enc(train), enc(dev)

    model = Seq2Seq(a.vocab, a.d_model, a.heads, a.layers, a.d_ff, a.dropout)
    opt, sched = make_optimizer(model, a.d_model, a.warmup)
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=a.label_smoothing)
    rng = random.Random(a.seed)
    batches = make_batches(train_ids, a.max_tokens, rng)
    log, step, epoch, start = [], 0, 0, time.time()
    logf = open(a.out / "log.jsonl", "w")
    tokens = 0
    while step < a.steps:
        if a.rebatch and epoch > 0:
            batches = make_batches(train_ids, a.max_tokens, rng)
        rng.shuffle(batches)
        for idx in batches:
            src, tgt_in, tgt_out = tensors(train_ids, idx)
            loss = train_step(model, opt, sched, loss_fn, src, tgt_in, tgt_out)
            step += 1
            tokens += int((tgt_out != PAD).sum())
            rec = {"step": step, "loss": loss.item()}
            if step % a.eval_every == 0 or step == a.steps:
                rec["dev_ppl"] = dev_ppl(model, dev_ids, a.max_tokens)
                rec["elapsed"] = time.time() - start
                print(json.dumps(rec), flush=True)
            if step % 50 == 0 or "dev_ppl" in rec:
                log.append(rec); logf.write(json.dumps(rec) + "\n"); logf.flush()
            if step == a.steps:
                break
        epoch += 1
    result = {"args": {k: str(v) for k, v in vars(a).items()}, "dev_ppl": log[-1]["dev_ppl"],
              "curve": log, "train_seconds": time.time() - start, "target_tokens_per_step": tokens / a.steps,
              "provenance": {"command": [Path(sys.argv[0]).name, *sys.argv[1:]], "torch": torch.__version__,
                             "sacrebleu": sacrebleu.__version__, "sentencepiece": spm.__version__,
                             "machine": platform.machine(), "threads": a.threads,
                             "commit": commit, "date": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}}
    if a.save_model:
        torch.save(model.state_dict(), a.out / "model.pt")
    if a.test:
        test = read_tsv(a.test)[: a.test_limit]
        hyps = greedy(model, sp, [s for s, _ in test])
        refs = [t for _, t in test]
        bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
        b, c = bleu.corpus_score(hyps, [refs]), chrf.corpus_score(hyps, [refs])
        result.update(bleu=b.score, bleu_text=str(b), bleu_signature=str(bleu.get_signature()), chrf=c.score,
                      chrf_signature=str(chrf.get_signature()), test_sentences=len(test),
                      samples=[{"source": test[i][0], "reference": refs[i], "hypothesis": hyps[i]}
                               for i in range(0, len(test), max(1, len(test) // 5))])
        print(b, "\n", c, flush=True)
    (a.out / "result.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: result.get(k) for k in ("dev_ppl", "bleu", "chrf", "train_seconds")}))


if __name__ == "__main__":
    main()
