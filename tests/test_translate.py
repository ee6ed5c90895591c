"""Tests of annotated_transformer.translate (chapter 9b): the corpus data builder, Translator, the translate and
evaluate commands, the --arch torch option, and their error messages. Tiny models on tiny fixture files: no network,
no large corpus."""
import json
import math
import re
import os
import subprocess
import sys
import shutil
import warnings
from pathlib import Path

import pytest
import torch

from annotated_transformer.cli import main as cli
from annotated_transformer.data import load_corpus, normalize_text
from annotated_transformer.subwords import CORPUS_FILE, TOKENIZER_FILE, Tokenizer, corpus_data, train_tokenizer
from annotated_transformer.checkpoint import average_checkpoints
from annotated_transformer.decoding import greedy_decode
from annotated_transformer.masking import padding_mask
from annotated_transformer.model import EncoderDecoder
from annotated_transformer.torch_compare import TorchTransformer
from annotated_transformer.train_command import train_main
from annotated_transformer.batching import make_batch
from annotated_transformer.sampler import DATA_BUILDERS
from annotated_transformer.train_config import TrainConfig
from annotated_transformer.train_config import build_model
from annotated_transformer.checkpoint import load_model
from annotated_transformer.translate import Translator, score_translations
from conftest import subprocess_env

FIX = Path(__file__).parent / "fixtures"
SPEC = f"tsv:{FIX / 'de_en_train.tsv'};{FIX / 'dev.tsv'};{FIX / 'test.tsv'}"
TINY = ["--data", "corpus", "--data-option", f"spec={SPEC}", "--data-option", "vocab_size=350",
        "--N", "1", "--d-model", "32", "--h", "2", "--d-ff", "64", "--warmup", "10", "--max-tokens", "200",
        "--log-every", "5", "--eval-every", "10", "--checkpoint-every", "5", "--keep-last", "3", "--device", "cpu",
        "--threads", "1", "--no-progress"]


def train(out: Path, *extra: str, steps: int = 20) -> Path:
    assert train_main([*TINY, "--steps", str(steps), "--out", str(out), *extra]) == 0
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    "A tiny run of our model on the fixture corpus (20 steps, checkpoints every 5)."
    torch.set_num_threads(1)
    return train(tmp_path_factory.mktemp("runs") / "ours")


@pytest.fixture(scope="module")
def torch_run(tmp_path_factory) -> Path:
    torch.set_num_threads(1)
    return train(tmp_path_factory.mktemp("runs") / "torch", "--arch", "torch", steps=10)


# ---- the corpus data builder ----------------------------------------------------------------------------------
def test_corpus_is_registered():
    assert DATA_BUILDERS["corpus"] is corpus_data


def test_builder_writes_a_tokenizer_that_round_trips(run):
    tok = Tokenizer.load(run / TOKENIZER_FILE)
    corpus = load_corpus(SPEC)
    for src, tgt in corpus.train[:5] + corpus.test:
        for text in (src, tgt):
            assert tok.decode(tok.encode(text)) == normalize_text(text)
    meta = json.loads((run / CORPUS_FILE).read_text())
    assert meta["spec"] == SPEC and meta["sizes"] == {"train": 21, "dev": 1, "test": 2}
    assert meta["vocab_size"] == tok.vocab_size == 350 and meta["train_pairs_used"] == 21
    config = json.loads((run / "config.json").read_text())
    assert config["model"]["src_vocab"] == config["model"]["tgt_vocab"] == 350 and "arch" not in config["model"]
    assert config["data"]["meta"]["tokenizer"] == TOKENIZER_FILE


def test_builder_trains_the_tokenizer_on_the_train_split_only(run):
    "The saved tokenizer is the one train_tokenizer learns from the train split alone (dev and test stay unseen)."
    tok = Tokenizer.load(run / TOKENIZER_FILE)
    corpus = load_corpus(SPEC)
    assert tok == train_tokenizer(corpus.train, 350, num_threads=1)
    assert tok != train_tokenizer(corpus.train + corpus.test, 350, num_threads=1)


def test_builder_options_and_pairs():
    cfg = TrainConfig(data="corpus", data_options={"spec": SPEC, "vocab_size": 350, "max_subwords": 20}, threads=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = corpus_data(cfg)
    assert data.src_vocab == data.tgt_vocab == 350 and (data.pad, data.bos, data.eos) == (0, 1, 2)
    assert all(max(len(s), len(t)) <= 20 for s, t in data.train)  # longer pairs are left out ...
    assert data.meta["train_pairs_too_long"] == 21 - len(data.train) == 10  # ... and counted
    assert all(3 <= i < 350 for s, t in data.train for i in s + t)  # bare ids: no PAD/BOS/EOS inside
    make_batch(list(data.train))  # the trainer adds EOS/BOS itself
    assert set(data.files) == {TOKENIZER_FILE, CORPUS_FILE}
    bad = TrainConfig(data="corpus", data_options={"spec": SPEC, "vocab_sise": 350})
    with pytest.raises(ValueError, match="not understood by the loader"):
        corpus_data(bad)
    with pytest.raises(ValueError, match="every training pair is longer than max_subwords=5"):
        corpus_data(TrainConfig(data="corpus", data_options={"spec": SPEC, "vocab_size": 350, "max_subwords": 5}))


# ---- translate -----------------------------------------------------------------------------------------------
def test_translate_stdin_with_an_empty_line(run, monkeypatch, capsys):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO("Guten Morgen.\n\nWie geht es dir?\n"))
    assert cli(["translate", "--model", str(run), "--greedy", "--threads", "1"]) == 0
    out, err = capsys.readouterr()
    lines = out.split("\n")
    assert len(lines) == 4 and lines[1] == "" and lines[3] == ""  # three lines, the empty one stays empty
    assert "1 empty input line(s) (line 2)" in err


def test_translate_file_to_file_matches_the_python_api(run, tmp_path):
    src = tmp_path / "in.de"
    src.write_text("Guten Morgen.\nIch habe Hunger.\nWo ist der Bahnhof?\n", encoding="utf-8")
    out = tmp_path / "out.en"
    assert cli(["translate", "--model", str(run), "--input", str(src), "--output", str(out), "--beam", "3"]) == 0
    got = out.read_text(encoding="utf-8").splitlines()
    expected = Translator(run).translate(src.read_text(encoding="utf-8").splitlines(), beam_size=3)
    assert got == expected and len(got) == 3


def test_translate_output_into_a_missing_folder_is_refused_by_name(run, tmp_path, capsys):
    "--output in a folder that does not exist: one line naming the folder, exit 2, before any work; none is made."
    src = tmp_path / "in.de"
    src.write_text("Guten Morgen.\n", encoding="utf-8")
    for missing in (tmp_path / "no" / "such" / "out.en", src / "out.en"):  # no folder; a file, not a folder
        with pytest.raises(SystemExit) as e:
            cli(["translate", "--model", str(run), "--input", str(src), "--output", str(missing), "--greedy"])
        err = capsys.readouterr().err
        assert e.value.code == 2 and err.count("\n") == 1, err
        assert f"--output {missing}: there is no folder {missing.parent} to write it in" in err, err
    assert not (tmp_path / "no").exists()
    with pytest.raises(SystemExit) as e:  # evaluate's --hyp-out likewise, before the evaluation
        cli(["evaluate", "--model", str(run), "--greedy", "--hyp-out", str(tmp_path / "no" / "hyp.en")])
    assert e.value.code == 2 and "there is no folder" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
def test_translate_output_that_cannot_be_written_names_the_file(run, tmp_path, capsys):
    "An OSError while writing --output (here a full device): one line naming the file and why, exit 1."
    src = tmp_path / "in.de"
    src.write_text("Guten Morgen.\n", encoding="utf-8")
    with pytest.raises(SystemExit) as e:
        cli(["translate", "--model", str(run), "--input", str(src), "--output", "/dev/full", "--greedy"])
    err = capsys.readouterr().err
    assert e.value.code == 1 and err.count("\n") == 1, err
    assert "annotated-transformer translate: error: cannot write --output /dev/full: No space left on device" in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a device that is always full)")
@pytest.mark.parametrize("option", ["--hyp-out", "--json"])
def test_evaluate_output_that_cannot_be_written_names_the_file(run, option, capsys):
    "An OSError while writing evaluate's --hyp-out or --json: one line naming the option and the file, exit 1."
    with pytest.raises(SystemExit) as e:
        cli(["evaluate", "--model", str(run), "--greedy", "--samples", "0", option, "/dev/full"])
    assert e.value.code == f"annotated-transformer evaluate: error: cannot write {option} /dev/full: " \
                           "No space left on device"
    assert "Traceback" not in capsys.readouterr().err


def test_translator_batches_give_the_same_output_as_one_by_one(run):
    "Sorting by length, padding and batching change nothing: each sentence decoded alone gives the same text."
    t = Translator(run)
    sentences = [s for s, _ in load_corpus(SPEC).train[:8]]
    together = t.translate(sentences, greedy=True, batch_size=8)
    alone = [t.translate([s], greedy=True)[0] for s in sentences]
    assert together == alone


def test_translator_decodes_like_greedy_decode(run):
    "translate = encode + EOS, greedy_decode, cut at EOS, detokenize."
    t = Translator(run)
    text = "Guten Morgen."
    ids = t.tokenizer.encode(text)
    src = torch.tensor([ids + [2]])
    out = greedy_decode(t.model, src, padding_mask(src, 0)).tolist()[0]
    out = out[:out.index(2)] if 2 in out else out
    assert t.translate([text], greedy=True) == [t.tokenizer.decode(out)]


def test_checkpoint_averaging_uses_the_last_k(run):
    t = Translator(run, avg=3)
    assert [p.name for p in t.checkpoints] == ["step_000010.pt", "step_000015.pt", "step_000020.pt"]
    averaged = average_checkpoints(t.checkpoints)
    for key, value in t.model.state_dict().items():
        torch.testing.assert_close(value, averaged[key])
    with pytest.raises(ValueError, match="has only 3"):
        Translator(run, avg=4)


def test_attention_maps_shapes(run):
    maps = Translator(run).attention_maps("Guten Morgen.", translation="Good morning.")
    S, T = len(maps["src_tokens"]), len(maps["tgt_tokens"])
    assert maps["src_tokens"][-1] == "</s>" and maps["tgt_tokens"][0] == "<s>"
    assert (len(maps["encoder_self"]), len(maps["encoder_self"][0])) == (S, S)
    assert (len(maps["decoder_self"]), len(maps["decoder_self"][0])) == (T, T)
    assert (len(maps["cross"]), len(maps["cross"][0])) == (T, S)
    for name in ("encoder_self", "decoder_self", "cross"):  # rows are distributions (up to the rounding to 4 places)
        assert all(abs(sum(row) - 1) < 1e-3 for row in maps[name])
    dec = maps["decoder_self"]
    assert all(dec[i][j] == 0 for i in range(T) for j in range(i + 1, T))  # causal: nothing from the future


# ---- evaluate ------------------------------------------------------------------------------------------------
def test_evaluate_prints_scores_with_signatures(run, tmp_path, capsys):
    js = tmp_path / "eval.json"
    assert cli(["evaluate", "--model", str(run), "--split", "test", "--greedy", "--json", str(js),
                "--hyp-out", str(tmp_path / "hyp.txt")]) == 0
    out = capsys.readouterr().out
    assert "BLEU = " in out and "signature: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:" in out
    assert "chrF2 = " in out and "signature: nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" in out
    record = json.loads(js.read_text())
    assert record["sentences"] == 2 and record["decoding"] == {"method": "greedy"} and "hypotheses" not in record
    assert record["command"].startswith("annotated-transformer evaluate --model")
    hyps = (tmp_path / "hyp.txt").read_text(encoding="utf-8").splitlines()
    refs = [t for _, t in load_corpus(SPEC).test]
    assert score_translations(hyps, refs)["bleu"]["score"] == pytest.approx(record["bleu"]["score"])


def test_a_perfect_hypothesis_scores_100(tmp_path, capsys):
    refs = ["She speaks three languages and reads two more.", "It has been raining since yesterday morning."]
    scores = score_translations(refs, refs)
    assert scores["bleu"]["score"] == pytest.approx(100) and scores["chrf"]["score"] == pytest.approx(100)
    assert score_translations(["It rains."] * 2, refs)["bleu"]["score"] < 10
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    assert cli(["evaluate", "--hyp", str(ref), "--ref", str(ref)]) == 0
    assert "BLEU = 100.00" in capsys.readouterr().out


REFERENCES = ["In the beginning God created the heavens and the earth.",
              "And the earth was waste and void; and darkness was upon the face of the deep.",
              "And God said, Let there be light: and there was light.",
              "And God saw the light, that it was good."]


def test_bleu_scores_the_hypotheses_against_the_references():
    "sacrebleu wants (hypotheses, [references]); swapped, output that stops halfway escapes the brevity penalty."
    import sacrebleu
    halves = [" ".join(r.split()[: len(r.split()) // 2]) for r in REFERENCES]
    right, swapped = sacrebleu.corpus_bleu(halves, [REFERENCES]), sacrebleu.corpus_bleu(REFERENCES, [halves])
    assert right.bp < 0.5 and swapped.bp == 1.0 and right.score < swapped.score  # the example can tell them apart
    assert score_translations(halves, REFERENCES)["bleu"]["score"] == pytest.approx(right.score)


def test_bleu_is_case_sensitive_on_detokenized_text():
    "sacrebleu's standard BLEU: mixed case, its own 13a tokenizer applied to detokenized text."
    scores = score_translations([r.lower() for r in REFERENCES], REFERENCES)["bleu"]
    assert scores["score"] < 90
    assert "|case:mixed|" in scores["signature"] and "|tok:13a|" in scores["signature"]


def test_chinese_targets_use_sacrebleus_zh_tokenizer():
    assert "tok:zh" in score_translations(["我爱你。"], ["我爱你。"], tgt_lang="zh")["bleu"]["signature"]


# ---- nn.Transformer ------------------------------------------------------------------------------------------
def test_arch_torch_trains_and_translates(torch_run):
    config = json.loads((torch_run / "config.json").read_text())
    assert config["model"]["arch"] == "torch" and config["train"]["arch"] == "torch"
    model = load_model(torch_run, device="cpu")
    assert isinstance(model, TorchTransformer) and not model.training
    losses = [json.loads(line)["loss"] for line in (torch_run / "metrics.jsonl").read_text().splitlines()
              if "loss" in json.loads(line)]
    assert len(losses) == 2 and all(map(lambda x: x == x, losses))
    fast, slow = Translator(torch_run), Translator(torch_run, convert=False)
    assert isinstance(fast.model, EncoderDecoder) and isinstance(slow.model, TorchTransformer)
    sentences = [s for s, _ in load_corpus(SPEC).train[:6]]
    assert fast.translate(sentences, greedy=True) == slow.translate(sentences, greedy=True)


def test_torch_arch_keeps_final_norms_only_in_pre_norm():
    post = build_model(dict(src_vocab=20, tgt_vocab=20, N=1, d_model=16, d_ff=32, h=2, arch="torch"))
    pre = build_model(dict(src_vocab=20, tgt_vocab=20, N=1, d_model=16, d_ff=32, h=2, norm_first=True, arch="torch"))
    assert isinstance(post.transformer.encoder.norm, torch.nn.Identity)
    assert isinstance(pre.transformer.decoder.norm, torch.nn.LayerNorm)
    with pytest.raises(ValueError, match="arch must be one of ours, torch"):
        TrainConfig(arch="tensorflow").validate()


# ---- errors --------------------------------------------------------------------------------------------------
def test_missing_run_directory(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        cli(["translate", "--model", str(tmp_path / "nope")])
    assert e.value.code == 2 and "no such run directory or checkpoint" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="no checkpoints"):
        Translator(tmp_path)


def test_missing_tokenizer(run, tmp_path, capsys):
    bare = tmp_path / "bare"
    shutil.copytree(run / "checkpoints", bare / "checkpoints")
    with pytest.raises(FileNotFoundError, match="no tokenizer"):
        Translator(bare)
    with pytest.raises(SystemExit):
        cli(["evaluate", "--model", str(bare)])
    assert "--tokenizer FILE" in capsys.readouterr().err
    # given explicitly, it works (but evaluate still needs corpus.json)
    t = Translator(bare / "checkpoints" / "step_000020.pt", tokenizer=run / TOKENIZER_FILE)
    assert t.run_dir == bare and len(t.translate(["Guten Morgen."], greedy=True)) == 1
    with pytest.raises(SystemExit):
        cli(["evaluate", "--model", str(bare), "--tokenizer", str(run / TOKENIZER_FILE)])
    assert "corpus.json is missing" in capsys.readouterr().err


def test_unknown_split_and_other_usage_errors(run, tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli(["evaluate", "--model", str(run), "--split", "training"])
    assert "unknown split 'training'" in capsys.readouterr().err
    h = tmp_path / "h.txt"
    h.write_text("a\nb\n")
    r = tmp_path / "r.txt"
    r.write_text("a\n")
    with pytest.raises(SystemExit):
        cli(["evaluate", "--hyp", str(h), "--ref", str(r)])
    assert "2 hypotheses but 1 references" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli(["evaluate", "--hyp", str(h)])
    assert "needs both --hyp and --ref" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli(["translate", "--model", str(run), "--input", str(tmp_path / "missing.txt")])
    assert "no such input file" in capsys.readouterr().err
    with pytest.raises(TypeError, match="a list of sentences"):
        Translator(run).translate("Guten Morgen.")
    with pytest.raises(ValueError, match="needs a run directory"):
        Translator(run / "checkpoints" / "step_000020.pt", avg=2)


# ---- the recipes printed in chapter 22 ------------------------------------------------------------------------
def _printed_recipes() -> dict:
    "The variables of chapter 22's recipe cell (`recipe`, `zh`, `own`): string assignments only, run here."
    nb = json.loads((Path(__file__).parents[1] / "nbs" / "22_translate.ipynb").read_text(encoding="utf-8"))
    cell = next("".join(c["source"]) for c in nb["cells"] if "".join(c["source"]).startswith("recipe = ("))
    names = {}
    exec(cell, {}, names)
    return names


def _printed_recipe(spec: str) -> list[str]:
    "`annotated-transformer train` arguments of chapter 22's runs on the book's own splits, for corpus `spec`."
    import shlex
    names = _printed_recipes()
    assert spec in [s for _, s, _ in names["own"]]
    return shlex.split(names["recipe"].replace("reference:bible-de-en", spec))


def test_printed_chinese_recipe_reads_the_manythings_file():
    "Chapter 22's zh-en command, on a file a reader downloads in manythings.org's layout (english, chinese, attribution)."
    import shlex
    from annotated_transformer.subwords import _BUILDER_OPTIONS
    from annotated_transformer.train_command import build_parser, resolve_config
    fixture = FIX / "eng_cmn_manythings.tsv"
    argv = [a.replace("spec=tatoeba:", f"spec=tatoeba:{fixture}") for a in _printed_recipe("tatoeba:")]
    assert any(a == f"spec=tatoeba:{fixture}" for a in argv)  # the printed command names the shipped pairs
    cfg, _ = resolve_config(build_parser().parse_args(argv))
    options = {k: v for k, v in cfg.data_options.items() if k not in _BUILDER_OPTIONS}
    corpus = load_corpus(cfg.data_options["spec"], **options)
    rows = [line.split("\t") for line in fixture.read_text(encoding="utf-8").splitlines()]
    english_of = {zh: en for en, zh, _ in rows}
    pairs = corpus.train + corpus.dev + corpus.test
    assert len(pairs) == len(rows) and (corpus.src_lang, corpus.tgt_lang) == ("zh", "en")
    for source, target in pairs:  # the Chinese is the source, its own English the target
        assert any("\u4e00" <= ch <= "\u9fff" for ch in source) and english_of[source] == target
    bible = resolve_config(build_parser().parse_args(_printed_recipe("bible:de-en")))[0]
    assert bible.data_options["spec"] == "bible:de-en" and (bible.steps, bible.max_tokens) == (1000, 4000)
    names = _printed_recipes()
    for args, spec in ((names["recipe"], "reference:bible-de-en"), (names["zh"], "reference:cmn-eng")):
        assert resolve_config(build_parser().parse_args(shlex.split(args)))[0].data_options["spec"] == spec


def test_a_corpus_kind_registered_at_run_time_reaches_evaluate(tmp_path):
    "A kind registered by the user's module trains in one process and evaluates in another that never imported it."
    (tmp_path / "my_corpora.py").write_text(
        "from annotated_transformer.data import load_corpus, register_corpus\n\n\n"
        "def load_mine(arg, **kwargs):\n"
        "    return load_corpus('tsv:' + arg, **kwargs)\n\n\n"
        "register_corpus('mine', load_mine)\n", encoding="utf-8")
    env = subprocess_env()
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(tmp_path)])
    out = tmp_path / "run"
    args = [a.replace("spec=tsv:", "spec=mine:") for a in TINY] + ["--steps", "2", "--out", str(out)]
    script = "import sys, my_corpora\nfrom annotated_transformer.cli import main\nsys.exit(main(sys.argv[1:]))"
    trained = subprocess.run([sys.executable, "-c", script, "train", *args], env=env, capture_output=True, text=True)
    assert trained.returncode == 0, trained.stderr
    assert json.loads((out / "corpus.json").read_text())["loader"] == "my_corpora:load_mine"
    scored = subprocess.run([sys.executable, "-m", "annotated_transformer.cli", "evaluate", "--model", str(out),
                             "--split", "test", "--greedy"], env=env, capture_output=True, text=True)
    assert scored.returncode == 0 and "BLEU = " in scored.stdout, scored.stderr
    (tmp_path / "my_corpora.py").unlink()  # the loader is gone: one clear line naming it
    gone = subprocess.run([sys.executable, "-m", "annotated_transformer.cli", "evaluate", "--model", str(out),
                           "--split", "test", "--greedy"], env=env, capture_output=True, text=True)
    assert gone.returncode != 0 and "registered by my_corpora:load_mine" in gone.stderr, gone.stderr
    assert "Traceback" not in gone.stderr


# ---- length and decoding settings chosen on dev (evaluate --tune) ---------------------------------------------
def test_scores_report_length_and_warn_when_off_by_more_than_ten_percent():
    from annotated_transformer.translate import format_scores, length_warning
    refs = ["one two three four five six seven eight nine ten"] * 2
    short = score_translations(["one two three four five six seven eight"] * 2, refs)
    assert short["length"]["ratio"] == pytest.approx(0.8) and short["length"]["hyp_len"] == 16
    assert short["length"]["bp"] == pytest.approx(math.exp(1 - 1 / 0.8))  # BLEU's brevity penalty
    assert "length ratio 0.800 (16 words of output, 20 in the references), brevity penalty " in format_scores(short)
    assert length_warning(short) == ("warning: the translations are 20% shorter than the references (length ratio "
                                     "0.800); choose --alpha and --avg on the dev split with `evaluate --tune`")
    long = score_translations([r + " eleven twelve" for r in refs], refs)
    assert "20% longer" in length_warning(long) and long["length"]["bp"] == 1.0
    assert length_warning(score_translations([r + " eleven" for r in refs], refs)) is None  # 10 %: within


def test_repeats_finds_a_run_of_four_words_said_twice():
    from annotated_transformer.translate import format_scores, length_warning, repeats
    assert repeats("and he said unto them, and he said unto them") and repeats("a b c d a b c d")
    assert not repeats("and he said and he said unto them and he said")  # three words three times: no 4-gram twice
    assert not repeats("a b c d a b c e") and not repeats("") and not repeats("one two three")
    refs = ["one two three four five six seven eight nine ten", "a b c d e f g h i j"]
    loop = score_translations([refs[0] + " two three four five", refs[1]], refs)
    assert loop["repeating"] == {"hypotheses": 0.5, "references": 0.0}
    assert "50% of the translations repeat a run of 4 words (0% of the references)" in format_scores(loop)
    assert length_warning(loop) == ("warning: the translations are 20% longer than the references (length ratio "
                                    "1.200), and 50% of them repeat a run of 4 words (0% of the references); choose "
                                    "--alpha and --avg on the dev split with `evaluate --tune`")
    short = score_translations(["one two three four five six seven eight one two", "a b"], refs)
    assert "repeat" not in length_warning(short)  # short output: repeats are not the reason


def test_evaluate_warns_on_stderr_about_length(run, tmp_path, capsys):
    ref = tmp_path / "ref.txt"
    hyp = tmp_path / "hyp.txt"
    ref.write_text("a b c d e f g h i j\n", encoding="utf-8")
    hyp.write_text("a b c d e\n", encoding="utf-8")
    assert cli(["evaluate", "--hyp", str(hyp), "--ref", str(ref)]) == 0
    out, err = capsys.readouterr()
    assert "length ratio 0.500" in out and err.count("\n") == 1 and "50% shorter" in err


def _copy_run(run: Path, to: Path) -> Path:
    shutil.copytree(run, to)
    for lock in to.glob("*.lock"):
        lock.unlink()
    return to


def test_tune_chooses_on_dev_writes_the_choice_and_translate_uses_it(run, tmp_path, capsys):
    from annotated_transformer.translate import DECODING_FILE, chosen_decoding
    tuned = _copy_run(run, tmp_path / "tuned")
    js = tmp_path / "eval.json"
    assert cli(["evaluate", "--model", str(tuned), "--tune", "--json", str(js), "--samples", "0"]) == 0
    out = capsys.readouterr().out
    record = json.loads((tuned / DECODING_FILE).read_text())
    # the grid: greedy, then beam 4 with each alpha; the run keeps 3 checkpoints, too few to average 5: the last only
    assert [(r["avg"], r["decoding"].get("length_penalty")) for r in record["grid"]] == [
        (1, None), (1, 0.6), (1, 1.0), (1, 1.4)]
    best = max(record["grid"], key=lambda r: r["bleu"])
    assert record["chosen"] == {"avg": best["avg"], "decoding": best["decoding"]} == chosen_decoding(tuned)
    assert record["metric"] == "BLEU on the dev split" and out.count("dev: ") == len(record["grid"])
    assert "decoding as chosen on the dev split" in out
    evaluated = json.loads(js.read_text())
    assert evaluated["split"] == "test" and evaluated["decoding"] == record["chosen"]["decoding"]
    assert evaluated["avg"] == record["chosen"]["avg"] and evaluated["tuned_on_dev"]["chosen"] == record["chosen"]
    # translate without decoding options follows the choice (and says so); explicit options win
    src = tmp_path / "in.txt"
    src.write_text("Guten Morgen.\n", encoding="utf-8")
    assert cli(["translate", "--model", str(tuned), "--input", str(src), "--output", str(tmp_path / "o1.txt")]) == 0
    assert "decoding as chosen on the dev split" in capsys.readouterr().err
    assert cli(["translate", "--model", str(tuned), "--input", str(src), "--greedy", "--output",
                str(tmp_path / "o2.txt")]) == 0
    assert "chosen" not in capsys.readouterr().err


def test_tuning_never_looks_at_the_test_split(run, tmp_path):
    "Poison the test split (sources and references): the dev scores and the choice stay exactly the same."
    from annotated_transformer.translate import tune_decoding
    clean, poisoned = _copy_run(run, tmp_path / "clean"), _copy_run(run, tmp_path / "poisoned")
    bad = tmp_path / "bad_test.tsv"
    bad.write_text("Unsinn\tnonsense\nMehr Unsinn\tmore nonsense\n", encoding="utf-8")
    meta = json.loads((poisoned / CORPUS_FILE).read_text())
    meta["spec"] = ";".join(meta["spec"].split(";")[:2] + [str(bad)])
    (poisoned / CORPUS_FILE).write_text(json.dumps(meta))
    a, b = (tune_decoding(r, alphas=(0.6, 1.4), averages=(1, 3)) for r in (clean, poisoned))
    strip = lambda grid: [{k: v for k, v in r.items() if k != "seconds"} for r in grid]
    assert a["chosen"] == b["chosen"] and strip(a["grid"]) == strip(b["grid"])


def test_tuning_reads_the_corpus_once(run, tmp_path, monkeypatch):
    "Every setting of the grid scores the same dev split: the corpus is read once, not once per setting."
    import annotated_transformer.translate as T
    calls = []
    monkeypatch.setattr(T, "load_corpus", lambda *a, **k: calls.append(a) or load_corpus(*a, **k))
    record = T.tune_decoding(_copy_run(run, tmp_path / "once"), alphas=(0.6, 1.4), averages=(1, 3))
    assert len(record["grid"]) == 6 and len(calls) == 1


def test_tune_refuses_what_it_chooses_itself_and_damaged_choices(run, tmp_path, capsys):
    from annotated_transformer.translate import DECODING_FILE
    for extra in (["--alpha", "1.0"], ["--avg", "2"], ["--greedy"]):
        with pytest.raises(SystemExit) as e:
            cli(["evaluate", "--model", str(run), "--tune", *extra])
        err = capsys.readouterr().err
        assert e.value.code == 2 and err.count("\n") == 1 and "--tune needs --model and chooses" in err
    damaged = _copy_run(run, tmp_path / "damaged")
    (damaged / DECODING_FILE).write_text('{"chosen": {"avg": 0}}')
    with pytest.raises(SystemExit) as e:
        cli(["translate", "--model", str(damaged), "--input", str(FIX / "dev.tsv")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "decoding.json is damaged" in err


# ---- in memory: from_model, save_pretrained, from_pretrained, sampling ------------------------------------------
def test_from_model_translates_like_the_run(run):
    t = Translator(run)
    mem = Translator.from_model(t.model, t.tokenizer, corpus=t.corpus)
    sentences = [s for s, _ in load_corpus(SPEC).train[:4]]
    assert mem.translate(sentences, beam_size=3) == t.translate(sentences, beam_size=3)
    assert mem.run_dir is None and "in memory" in repr(mem)
    with pytest.raises(ValueError, match="does not match the tokenizer's vocabulary"):
        Translator.from_model(build_model({**t.model_config, "src_vocab": 7, "tgt_vocab": 7}), t.tokenizer)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_save_pretrained_round_trip_is_exact(run, tmp_path, dtype):
    t = Translator.from_model(Translator(run, avg=3).model.to(dtype), Tokenizer.load(run / TOKENIZER_FILE),
                              corpus=json.loads((run / CORPUS_FILE).read_text()))
    folder = t.save_pretrained(tmp_path / "pretrained")
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "tokenizer.model"]
    loaded = Translator.from_pretrained(folder)
    a, b = t.model.state_dict(), loaded.model.state_dict()
    assert a.keys() == b.keys() and all(x.dtype == dtype and torch.equal(x, b[k]) for k, x in a.items())
    m = loaded.model  # the tied weights are one tensor again
    assert m.generator.proj.weight is m.tgt_embed[0].lut.weight is m.src_embed[0].lut.weight
    assert loaded.tokenizer == t.tokenizer and loaded.corpus == t.corpus
    sentences = [s for s, _ in load_corpus(SPEC).train[:4]]
    assert loaded.translate(sentences) == t.translate(sentences)


def test_from_pretrained_never_unpickles(run, tmp_path, monkeypatch):
    folder = Translator(run).save_pretrained(tmp_path / "p")

    def no_pickle(*args, **kwargs):
        raise AssertionError("from_pretrained called torch.load")
    monkeypatch.setattr(torch, "load", no_pickle)
    assert Translator.from_pretrained(folder).translate(["Guten Morgen."], greedy=True)


def test_from_pretrained_errors_are_one_line(run, tmp_path):
    folder = Translator(run).save_pretrained(tmp_path / "p")
    with pytest.raises(FileNotFoundError, match="no such folder"):
        Translator.from_pretrained(tmp_path / "nowhere")
    (folder / "tokenizer.model").unlink()
    with pytest.raises(FileNotFoundError, match=r"tokenizer.model missing; a folder written by save_pretrained"):
        Translator.from_pretrained(folder)
    folder = Translator(run).save_pretrained(tmp_path / "q")
    (folder / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(ValueError, match=r"model.safetensors: cannot load it into the model of config.json") as e:
        Translator.from_pretrained(folder)
    assert "\n" not in str(e.value)
    (folder / "config.json").write_text('{"model_config": {}}')
    with pytest.raises(ValueError, match="was not written by save_pretrained"):
        Translator.from_pretrained(folder)


def test_translate_samples_seeded(run):
    t = Translator(run)
    sentences = [s for s, _ in load_corpus(SPEC).train[:6]]
    a = t.translate(sentences, sample=True, temperature=1.0, top_p=0.9, seed=3)
    assert a == t.translate(sentences, sample=True, temperature=1.0, top_p=0.9, seed=3)
    assert t.translate(sentences, sample=True, temperature=0) == t.translate(sentences, greedy=True)
    with pytest.raises(ValueError, match="greedy=True or sample=True, not both"):
        t.translate(sentences, sample=True, greedy=True)


def test_a_run_trained_from_python_with_its_files_loads_in_a_translator(tmp_path):
    """Trainer(files=data.files) writes the tokenizer and the corpus record into out_dir, so that Translator(out_dir)
    loads a run trained from Python as it loads one of the train command; a resumed run finds the same files, other
    ones are refused."""
    from annotated_transformer.model import make_model
    from annotated_transformer.trainer import Trainer
    cfg = TrainConfig(data_options={"spec": SPEC, "vocab_size": 350}, warmup=10, max_tokens=200, steps=3,
                      eval_every=0, checkpoint_every=0, device="cpu", progress=False, threads=1)
    data = corpus_data(cfg)
    torch.manual_seed(0)
    model = make_model(data.src_vocab, data.tgt_vocab, N=1, d_model=32, h=2, d_ff=64)
    out = tmp_path / "run"
    Trainer(model, data.train, cfg, out_dir=out, files=data.files).fit()
    assert (out / TOKENIZER_FILE).read_bytes() == Tokenizer.load(out / TOKENIZER_FILE).sp.serialized_model_proto()
    translator = Translator(out)
    assert len(translator.translate(["Guten Morgen."], greedy=True)) == 1
    assert json.loads((out / CORPUS_FILE).read_text())["spec"] == SPEC
    again = Trainer(model, data.train, cfg, out_dir=out, files=data.files)  # the same files: accepted
    again.load(sorted((out / "checkpoints").glob("step_*.pt"))[-1])
    again.fit(4)
    with pytest.raises(ValueError, match=r"tokenizer\.model differs from the file of that name"):
        other = Trainer(model, data.train, cfg, out_dir=out, files={TOKENIZER_FILE: b"another"})
        other.load(sorted((out / "checkpoints").glob("step_*.pt"))[-1])
        other.fit(5)
    with pytest.raises(ValueError, match=r"'\.\./x' must be a plain file name"):
        Trainer(model, data.train, cfg, out_dir=out, files={"../x": "no"})


# ---- save_pretrained folders on the command line; translate --sample ---------------------------------------------
def test_translate_and_evaluate_read_a_save_pretrained_folder(run, tmp_path, capsys):
    "A folder of Translator.save_pretrained works wherever a run directory does: the same translations and scores."
    folder = Translator(run).save_pretrained(tmp_path / "pretrained")
    src = tmp_path / "in.de"
    src.write_text("Guten Morgen.\nIch habe Hunger.\n", encoding="utf-8")
    outs = {}
    for name, model in [("run", run), ("folder", folder)]:
        assert cli(["translate", "--model", str(model), "--input", str(src), "--output", str(tmp_path / name),
                    "--beam", "2"]) == 0
        outs[name] = (tmp_path / name).read_text(encoding="utf-8")
        assert cli(["evaluate", "--model", str(model), "--greedy", "--samples", "0",
                    "--json", str(tmp_path / f"{name}.json")]) == 0
    assert outs["folder"] == outs["run"] and outs["run"].count("\n") == 2
    scores = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in ("run", "folder")}
    assert scores["folder"]["bleu"] == scores["run"]["bleu"] and scores["folder"]["checkpoints"] == []
    # averaging needs checkpoints: one line naming the folder and the option
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        cli(["translate", "--model", str(folder), "--input", str(src), "--avg", "2"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "was written by save_pretrained" in err and "--avg" in err


def test_a_model_folder_translates_with_its_tokenizer(run, tmp_path, capsys):
    "EncoderDecoder.save_pretrained keeps no tokenizer: --tokenizer gives it; without it, one line says so."
    t = Translator(run)
    folder = t.model.save_pretrained(tmp_path / "model")
    src = tmp_path / "in.de"
    src.write_text("Guten Morgen.\n", encoding="utf-8")
    with pytest.raises(SystemExit) as e:
        cli(["translate", "--model", str(folder), "--input", str(src)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "holds a model without its tokenizer" in err and "--tokenizer FILE" in err
    assert cli(["translate", "--model", str(folder), "--input", str(src), "--greedy",
                "--tokenizer", str(run / TOKENIZER_FILE), "--output", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out").read_text(encoding="utf-8") == t.translate(["Guten Morgen."], greedy=True)[0] + "\n"
    with pytest.raises(SystemExit) as e:  # no corpus record to evaluate on: the message says where it looked
        cli(["evaluate", "--model", str(folder), "--tokenizer", str(run / TOKENIZER_FILE), "--greedy"])
    assert e.value.code == 2 and "the corpus record of" in capsys.readouterr().err


def test_from_pretrained_names_the_key_and_both_shapes(run, tmp_path):
    folder = Translator(run).save_pretrained(tmp_path / "p")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["model_config"]["d_ff"] = 128
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError) as e:
        Translator.from_pretrained(folder)
    assert "\n" not in str(e.value) and ("size mismatch for encoder.layers.0.feed_forward.w_1.weight: (64, 32) in "
                                         "model.safetensors, (128, 32) in the model") in str(e.value)


def test_translate_samples_on_the_command_line(run, tmp_path, capsys):
    "--sample with --seed repeats itself; --temperature 0 is greedy; sampling options without --sample are refused."
    src = tmp_path / "in.de"
    src.write_text("".join(s + "\n" for s, _ in load_corpus(SPEC).train[:6]), encoding="utf-8")

    def out(*args: str) -> str:
        assert cli(["translate", "--model", str(run), "--input", str(src), *args]) == 0
        return capsys.readouterr().out
    sampled = out("--sample", "--seed", "7", "--top-p", "0.9", "--top-k", "20", "--temperature", "1.5")
    assert sampled == out("--sample", "--seed", "7", "--top-p", "0.9", "--top-k", "20", "--temperature", "1.5")
    assert sampled.count("\n") == 6
    assert out("--sample", "--temperature", "0") == out("--greedy")
    sentences = src.read_text(encoding="utf-8").splitlines()
    api = Translator(run).translate(sentences, sample=True, seed=7, top_p=0.9, top_k=20, temperature=1.5)
    assert sampled == "".join(h + "\n" for h in api)
    for args, message in [(["--top-k", "3"], "--top-k goes with --sample"),
                          (["--seed", "1"], "--seed goes with --sample"),
                          (["--sample", "--greedy"], "--sample, --greedy and --beam each choose the decoding"),
                          (["--sample", "--temperature", "-1"], "--temperature must be a number >= 0, got -1.0"),
                          (["--sample", "--top-p", "1.5"], r"--top-p must be a number in \(0, 1\], got 1.5"),
                          (["--sample", "--top-k", "0"], "--top-k must be an integer >= 1, got 0"),
                          (["--sample", "--seed", "-2"], "--seed must be an integer >= 0, got -2")]:
        with pytest.raises(SystemExit) as e:
            cli(["translate", "--model", str(run), "--input", str(src), *args])
        err = capsys.readouterr().err
        assert e.value.code == 2 and err.count("\n") == 1, (args, err)
        assert re.search(message, err), (args, err)


def test_too_small_a_vocabulary_names_this_programs_option(tmp_path, capsys):
    "sentencepiece's advice names its own --character_coverage; the train command names its --data-option instead."
    with pytest.raises(SystemExit) as e:
        train_main([*TINY, "--data-option", "vocab_size=262", "--steps", "1", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1, err
    assert re.search(r"vocab_size=262 is too small for this training text: .* need (\d+); raise it "
                     r"\(on the command line: --data-option vocab_size=\1\)", err), err
    assert "--character_coverage" not in err
