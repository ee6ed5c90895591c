"""bench/table3.py: Table 3's rows as the paper defines them, the collector and its verdicts on small fixture records,
and one real run of a tiny model end to end (train, evaluate twice, record) on the fixture corpus.

The fixture records below are made up for these tests (every one says so in its "fixture" field); the chapter
reads the real ones in bench/results/table3/."""
import importlib.util
import json
import math
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures"


def _load_table3():
    spec = importlib.util.spec_from_file_location("table3", REPO / "bench" / "table3.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["table3"] = module
    spec.loader.exec_module(module)
    return module


t3 = _load_table3()


# ---- the rows ---------------------------------------------------------------------------------------------------
PAPER_ROWS = {  # Table 3 as printed: the values each row changes (d_k = d_model / h where the paper lists it)
    "A_h1": dict(h=1, d_k=512), "A_h4": dict(h=4, d_k=128), "A_h16": dict(h=16, d_k=32), "A_h32": dict(h=32, d_k=16),
    "B_dk16": dict(d_k=16), "B_dk32": dict(d_k=32),  # d_v stays 64
    "C_N2": dict(N=2), "C_N4": dict(N=4), "C_N8": dict(N=8),
    "C_d256": dict(d_model=256, d_k=32), "C_d1024": dict(d_model=1024, d_k=128),
    "C_ff1024": dict(d_ff=1024), "C_ff4096": dict(d_ff=4096),
    "D_p0": dict(dropout=0.0), "D_p2": dict(dropout=0.2), "D_ls0": dict(label_smoothing=0.0),
    "D_ls2": dict(label_smoothing=0.2), "E_learned": dict(positional="learned"),
}
PAPER_BASE = dict(N=6, d_model=512, d_ff=2048, h=8, d_k=64, dropout=0.1, label_smoothing=0.1, positional="sinusoidal")


@pytest.mark.parametrize("variant", list(PAPER_ROWS))
def test_each_row_at_the_paper_size_is_the_papers_row(variant):
    "Applied to the paper's base model, each variant changes exactly what Table 3 changes, nothing else."
    got = t3.settings_at_paper(variant)
    got.setdefault("d_k", got["d_model"] // got["h"])  # rows other than B leave d_k = d_model / h
    assert got == {**PAPER_BASE, **PAPER_ROWS[variant]}


def test_every_row_of_table3_is_listed_with_the_papers_numbers():
    assert set(t3.VARIANTS) == {"base", "big", "E_relative", "F_prenorm", "F_rope", *PAPER_ROWS} == set(t3.PAPER)
    assert t3.PAPER["base"] == dict(ppl=4.92, bleu=25.8, params=65)
    assert (t3.PAPER["A_h1"]["ppl"], t3.PAPER["C_N2"]["bleu"], t3.PAPER["D_ls0"]["ppl"]) == (5.29, 23.7, 4.67)
    assert [v.row for v in t3.VARIANTS.values()] == sorted(v.row for v in t3.VARIANTS.values())  # grouped A-E
    # row B keeps d_model and h and narrows the keys: a quarter and a half of the scale's d_model / h
    assert t3.settings("mini", "B_dk16")["d_k"] == 4 and t3.settings("mini", "B_dk32")["d_k"] == 8
    assert t3.settings("reference", "B_dk16")["d_k"] == 16 and "d_k" not in t3.settings("mini", "A_h4")


@pytest.mark.parametrize("variant", [v for v, p in t3.PAPER.items() if p["params"] and not t3.VARIANTS[v].reason])
def test_full_size_parameter_counts_are_within_7_percent_of_the_papers(variant):
    counted = t3.full_size_parameters(variant) / 1e6
    assert abs(counted - t3.PAPER[variant]["params"]) / t3.PAPER[variant]["params"] < 0.07, counted


def test_the_miniature_scales_sizes_and_keeps_the_rest():
    base = t3.SCALES["mini"].model
    assert t3.settings("mini", "A_h32")["h"] == 32 and t3.settings("mini", "A_h32")["d_model"] == base["d_model"]
    assert t3.settings("mini", "C_d1024")["d_model"] == 2 * base["d_model"]
    assert t3.settings("mini", "C_ff1024")["d_ff"] == base["d_ff"] // 2
    assert t3.settings("mini", "D_ls0")["label_smoothing"] == 0.0
    assert t3.settings("mini", "E_learned")["positional"] == "learned"
    # N: a third of the paper's depth rounds 2 and 4 layers to the same miniature; the table says so
    dup = t3.duplicates("mini")
    assert (base["N"] != 2) or dup.get("C_N4") == "C_N2"


def test_train_command_carries_the_variant_and_the_seed(tmp_path):
    args = t3.train_args("mini", "A_h1", 3, tmp_path / "r")
    text = " ".join(args)
    assert "--h 1 " in text and "--seed 3" in text and "--threads 1" in text and "--device cpu" in text
    assert t3.display(args, "train").startswith("annotated-transformer train --data corpus")


# ---- the collector and its verdicts -----------------------------------------------------------------------------
def fake_record(variant, seed, ppl, bleu, beam=None):
    "A made-up record with the fields the collector reads."
    return {"fixture": "made-up numbers for tests/test_table3.py, not a run", "name": f"mini_{variant}_s{seed}",
            "scale": "mini", "variant": variant, "row": t3.VARIANTS[variant].row, "seed": seed,
            "settings": {"N": 2}, "parameters": 1000 + seed, "dev_ppl": ppl,
            "greedy": {"bleu": bleu}, "beam4_avg5": {"bleu": bleu + 1 if beam is None else beam},
            "provenance": {"wall_seconds": {"total": 120.0 + seed}}}


@pytest.fixture
def results(tmp_path):
    records = [fake_record("base", 0, 30.0, 5.0), fake_record("base", 1, 31.0, 5.2), fake_record("base", 2, 32.0, 4.8),
               fake_record("A_h1", 0, 40.0, 3.0), fake_record("A_h1", 1, 41.0, 3.1),  # clearly worse: reproduces
               fake_record("D_p0", 0, 25.0, 6.0), fake_record("D_p0", 1, 24.0, 6.2),  # clearly better: contradicts
               fake_record("E_learned", 0, 29.0, 5.1), fake_record("E_learned", 1, 33.0, 4.9),  # paper: same
               fake_record("C_d1024", 0, 30.5, 5.0), fake_record("C_d1024", 1, 30.0, 5.1),  # paper: better; noise
               fake_record("D_ls0", 0, 20.0, 6.0)]  # one seed: cannot tell
    for r in records:
        (tmp_path / f"{r['name']}.json").write_text(json.dumps(r))
    (tmp_path / "other_base_s0.json").write_text(json.dumps({**records[0], "scale": "reference", "name": "x"}))
    return tmp_path


def test_collector_builds_the_table(results):
    records = t3.load_records(results, "mini")
    assert len(records) == 12 and [r["variant"] for r in records][:3] == ["base"] * 3
    lines = {line["variant"]: line for line in t3.table(records)}
    assert list(lines) == t3.ROW_ORDER
    base = lines["base"]
    assert base["seeds"] == [0, 1, 2] and base["dev_ppl"] == (31.0, 1.0) and base["parameters"] == 1000
    assert base["bleu_beam"][0] == pytest.approx(6.0) and base["minutes"][0] == pytest.approx(2.0 + 1 / 60)
    assert lines["A_h1"]["dev_ppl"] == (40.5, pytest.approx(math.sqrt(0.5)))
    assert lines["C_N2"]["not_run"] == lines["B_dk16"]["not_run"] == "not run"  # (no fixture records for them)
    assert math.isnan(lines["D_ls0"]["dev_ppl"][1])  # one seed: no spread
    text = t3.format_table(t3.table(records))
    assert "31.0 ± 1.0" in text and "not run" in text


def test_paper_directions():
    assert t3.paper_direction("A_h1", "ppl") == "worse" and t3.paper_direction("A_h1", "bleu") == "worse"
    assert t3.paper_direction("D_ls0", "ppl") == "better" and t3.paper_direction("D_ls0", "bleu") == "worse"
    assert t3.paper_direction("E_learned", "ppl") == "same" and t3.paper_direction("E_learned", "bleu") == "same"
    assert t3.paper_direction("A_h16", "ppl") == "same" and t3.paper_direction("C_d1024", "ppl") == "better"


def test_verdicts(results):
    records = t3.load_records(results, "mini")
    found = {line["variant"]: line for line in t3.trends(records)}
    # the verdicts' intervals are the randomized-block model of the whole table (stats.block, itself checked
    # against statsmodels): the base and five rows, 12 runs, 6 treatments + 3 seeds - 1 parameters, 4 d.o.f.
    table = {"base": {0: 30.0, 1: 31.0, 2: 32.0}, "A_h1": {0: 40.0, 1: 41.0}, "D_p0": {0: 25.0, 1: 24.0},
             "E_learned": {0: 29.0, 1: 33.0}, "C_d1024": {0: 30.5, 1: 30.0}, "D_ls0": {0: 20.0}}
    fit = t3._stats().block(table, "base")
    for name, iv in fit.items():
        got = found[name]["ppl"]["interval"]
        assert (got.mean, got.se, got.low, got.high) == pytest.approx((iv.mean, iv.se, iv.low, iv.high), rel=1e-9)
        assert got.df == iv.df == 4
    assert found["A_h1"]["ppl"]["diff"] == pytest.approx(10.0)  # both seeds: the mean paired difference
    assert found["A_h1"]["ppl"]["verdict"] == "reproduces" and found["A_h1"]["bleu"]["verdict"] == "reproduces"
    assert found["D_p0"]["ppl"]["verdict"] == "contradicts"  # better, where the paper found it worse
    assert found["E_learned"]["ppl"]["verdict"] == "inconclusive"  # the paper saw no difference; ours cannot say
    assert found["C_d1024"]["ppl"]["verdict"] == "inconclusive"
    # the row's own two seeds: one degree of freedom, t = 12.7; D_p0's verdict needs the whole table
    assert found["D_p0"]["ppl"]["row_interval"].df == 1 and found["D_p0"]["ppl"]["row_verdict"] == "inconclusive"
    assert "*" in t3.format_trends(list(found.values()))
    # one seed (D_ls0: 20 against the base's 30, 31, 32): its own check is one more base run, sd 1 * sqrt(1 + 1/3)
    d_ls0 = found["D_ls0"]["ppl"]
    assert d_ls0["row_interval"].kind == "one run" and d_ls0["row_interval"].se == pytest.approx(math.sqrt(4 / 3))
    assert d_ls0["interval"].kind == "block" and d_ls0["verdict"] == "reproduces"  # the paper: better
    # Holm over each metric's family: the verdicts are stats.adjusted_verdicts of the raw ones and their p-values
    for metric in ("ppl", "bleu", "bleu_beam"):
        lines = list(found.values())
        raw, ps = [x[metric]["raw_verdict"] for x in lines], [x[metric]["p"] for x in lines]
        assert [x[metric]["verdict"] for x in lines] == t3._stats().adjusted_verdicts(raw, ps)
        assert [x[metric]["p_holm"] for x in lines] == pytest.approx(t3._stats().holm(ps))


def test_a_verdict_that_holm_does_not_keep_is_suggestive():
    # five rows, each 3 points of perplexity above the base with a little noise (seeds 0 and 1): each row's
    # interval decides alone (p 0.03 to 0.04), none survives Holm over the five (p times 5, 4, ...)
    records = [fake_record("base", s, 30.0 + d, 5.0) for s, d in ((0, 0.0), (1, 1.0), (2, -1.0))]
    noise = {"A_h1": 0.8, "A_h4": -0.6, "A_h16": 0.7, "A_h32": -0.9, "B_dk16": 0.5}
    records += [fake_record(v, s, 33.0 + s + (n if s == 0 else -n), 5.0) for v, n in noise.items() for s in (0, 1)]
    found = t3.trends(records)
    assert all(x["ppl"]["raw_verdict"] in ("reproduces", "contradicts") and 0.01 < x["ppl"]["p"] < 0.05
               for x in found)
    assert all(x["ppl"]["verdict"] == "suggestive" and x["ppl"]["p_holm"] > 0.05 for x in found)
    assert "suggestive" in t3.format_trends(found)


def test_spread_checks_read_the_rows_differences(results):
    checks = t3.spread_checks(t3.load_records(results, "mini"))
    # the rows paired with the base on two seeds: A_h1, D_p0, E_learned, C_d1024 (D_ls0 has one seed). Their BLEU
    # differences (seeds 0, 1): -2.0, -2.1; +1.0, +1.0; +0.1, -0.3; 0.0, -0.1, so BLEU's variances are 0.005, 0,
    # 0.08 and 0.005 - a row without spread makes Bartlett's test undefined, and the check says so (nan)
    from scipy import stats as scipy_stats
    assert set(checks) == {"ppl", "bleu", "bleu_beam"} and checks["ppl"]["rows"] == 4
    ppl_diffs = [[10.0, 10.0], [-5.0, -7.0], [-1.0, 2.0], [0.5, -1.0]]
    assert math.isnan(checks["ppl"]["bartlett_p"]) == math.isnan(scipy_stats.bartlett(*ppl_diffs).pvalue)


# ---- one real run -------------------------------------------------------------------------------------------------
def test_one_tiny_run_end_to_end(tmp_path, monkeypatch):
    "Train 6 updates of a tiny model on the fixture corpus, score it greedy and with beam 4 + averaging, record it."
    spec = f"tsv:{FIX / 'de_en_train.tsv'};{FIX / 'dev.tsv'};{FIX / 'test.tsv'}"
    tiny = t3.Scale("tiny", dict(N=1, d_model=32, d_ff=64, h=2, dropout=0.1, label_smoothing=0.1,
                                 positional="sinusoidal"),
                    f"--data corpus --data-option spec={spec} --data-option vocab_size=350 --share-embeddings "
                    "--max-positions 64 --warmup 10 --max-tokens 200 --steps 6 --eval-every 3 --checkpoint-every 1 "
                    "--keep-last 5 --log-every 3", avg=2)
    monkeypatch.setitem(t3.SCALES, "tiny", tiny)
    dest = t3.run("tiny", "A_h1", 0, runs=tmp_path / "runs", results=tmp_path / "results")
    record = json.loads(dest.read_text())
    assert record["name"] == "tiny_A_h1_s0" and record["settings"]["h"] == 1 and record["model_config"]["h"] == 1
    assert record["parameters"] > 0 and record["dev_curve"][-1]["step"] == 6 and record["dev_ppl"] > 1
    assert record["greedy"]["sentences"] == 2 and record["beam4_avg5"]["avg"] == 2
    assert 0 <= record["greedy"]["bleu"] <= 100 and record["greedy"]["bleu_signature"].startswith("nrefs:1")
    prov = record["provenance"]
    assert prov["device"].startswith("cpu") and prov["torch"] and prov["date"] and prov["wall_seconds"]["total"] > 0
    assert record["commands"]["train"].startswith("annotated-transformer train") and "--seed 0" in record["commands"]["train"]
    assert not (tmp_path / "runs" / "tiny_A_h1_s0" / "checkpoints").exists()  # deleted after scoring
    assert t3.load_records(tmp_path / "results", "tiny")[0]["name"] == "tiny_A_h1_s0"
    # the same run as a candidate recipe of chapter 25's "How the recipe was chosen", from its record and from its
    # run directory (with the greedy score and training time that `recipe-choice` expects beside it)
    from_record = t3.recipe_candidate(dest)
    assert (from_record["steps"], from_record["warmup"], from_record["max_tokens"]) == (6, 10, 200)
    assert from_record["dev_curve"] == record["dev_curve"] and from_record["greedy"] == record["greedy"]
    out = tmp_path / "runs" / "tiny_A_h1_s0"
    Path(f"{out}.greedy.json").write_text(Path(f"{out}.eval.greedy.json").read_text())
    Path(f"{out}.train_seconds").write_text("12.5\n")
    from_dir = t3.recipe_candidate(out)
    assert from_dir["train_seconds"] == 12.5 and from_dir["greedy"]["bleu"] == record["greedy"]["bleu"]
    assert [c["dev_ppl"] for c in from_dir["dev_curve"]] == [c["dev_ppl"] for c in record["dev_curve"]]
    assert from_dir["command"].startswith("annotated-transformer train") and str(tmp_path) not in from_dir["command"]
    assert "runs/recipe_choice/tiny_A_h1_s0" in from_dir["eval_command"]


# ---- the chapter's claims ---------------------------------------------------------------------------------------
def chapter_claims(name: str = "CLAIMS") -> dict:
    "The verdicts chapter 25's prose states, from its hidden `NAME = {...}` cell: {(variant, metric): verdict}."
    import ast
    cells = json.loads((REPO / "nbs" / "25_variations.ipynb").read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and f"{name} = {{" in source:
            tree = ast.parse(source)
            for node in tree.body:
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == name:
                    return ast.literal_eval(node.value)
    raise AssertionError(f"chapter 25 has no {name} cell")


def test_the_chapters_claims_follow_from_the_recorded_runs():
    "Every 'reproduces / contradicts / within noise' of chapter 25 is what the recorded runs give."
    claims = chapter_claims()
    found = {line["variant"]: line for line in t3.trends(t3.load_records(scale="mini"))}
    assert len(claims) == 2 * len(found)  # every row, both measures
    for (variant, metric), word in claims.items():
        assert found[variant][metric]["verdict"] == word, (variant, metric, found[variant][metric])


def test_the_chapters_claims_at_the_reference_recipe_follow_from_the_gpu_runs():
    "The verdicts of chapter 25's GPU section: each row judged on its own (one seed: one more base run), Holm over 19."
    claims = chapter_claims("REFERENCE_CLAIMS")
    records = t3.load_records(scale="reference")
    assert len(records) >= 22 and all("H200" in r["provenance"]["device"] for r in records)
    found = {line["variant"]: line for line in t3.trends(records, analysis="row")}  # one seed per row: each alone
    assert len(claims) >= 9
    for (variant, metric), word in claims.items():
        assert found[variant][metric]["verdict"] == word, (variant, metric, found[variant][metric])
    # the prose calls every other verdict of the section inconclusive
    for line in found.values():
        for metric in ("ppl", "bleu_beam"):
            if (line["variant"], metric) not in claims:
                assert line[metric]["verdict"] == "inconclusive", (line["variant"], metric, line[metric])


@pytest.mark.parametrize("workers", [1, 2])
def test_the_queue_starts_nothing_once_its_stop_file_exists(tmp_path, workers):
    "Both queues (one run at a time, and --workers N) read --stop-file: a run going finishes, none starts after it."
    plan, stop, results = tmp_path / "plan.txt", tmp_path / "STOP", tmp_path / "results"
    plan.write_text("# a plan\nbase 0\nA_h1 0\n")
    stop.touch()
    results.mkdir()
    t3.main(["queue", "--scale", "mini", "--plan", str(plan), "--stop-file", str(stop), "--workers", str(workers),
             "--runs", str(tmp_path / "runs"), "--results", str(results)])
    log = (tmp_path / "plan.log").read_text()
    assert not re.search(r"\bstart \w+ seed", log) and not list(results.iterdir()), log
    assert "exists" in log


def test_plan_accounting_reads_the_queue_log(tmp_path):
    plan = tmp_path / "p.txt"
    plan.write_text("# a plan\nA_h1 2\nA_h4 2\nD_p0 2\n")
    plan.with_suffix(".log").write_text(
        "2026-11-27 08:44:13 start A_h1 seed 2\n"
        "2026-11-27 09:02:08 recorded: A_h1 seed 2\n"
        "2026-11-27 09:02:08 start A_h4 seed 2\n"
        "2026-11-27 09:03:00 cut by hand (time was up), not recorded: A_h4 seed 2\n"
        "2026-11-27 09:03:00 not started: D_p0 seed 2\n"
        "2026-11-27 09:04:00 note (written by hand): something happened\n"
        "2026-11-27 10:00:00 start A_h4 seed 2\n"
        "2026-11-27 10:20:00 exit 0, recorded: A_h4 seed 2\n")
    for v in ("A_h1", "A_h4"):  # D_p0 never recorded
        (tmp_path / f"mini_{v}_s2.json").write_text("{}")
    a = t3.plan_accounting(plan, tmp_path)
    assert (a["planned"], a["recorded"], a["started"]) == (3, 2, 2) and a["missing"] == [("D_p0", "2")]
    assert a["started_again"] == [("A_h4", "2")] and a["cut"] == [(("A_h4", "2"), "cut by hand (time was up)")]
    assert a["waited"] == [("D_p0", "2")] and a["notes"] == ["2026-11-27 09:04:00 note (written by hand): something happened"]
