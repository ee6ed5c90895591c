"""The five-language benchmark (bench/multilingual.py, chapter 24): its plan, its wrapper, and the recorded runs.

The runs themselves need a GPU and minutes each; what CI can check is that the wrapper that puts the independent
loop on a GPU shares no code with the package, that the plan is what the chapter says, and that every recorded run
names its command, commit, device and date."""
import ast
import importlib.util
import json
import math
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tf32_wrapper_imports_nothing_from_the_package():
    "The loop runs under bench/tf32.py: the wrapper must not bring the package into the loop's process."
    tree = ast.parse((REPO / "bench" / "tf32.py").read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported == {"runpy", "sys", "torch"}


def test_the_plan_runs_both_programs_on_every_pair_first():
    ml = _load("multilingual")
    plan = ml.plan()
    names = [r["name"] for r in plan]
    assert len(names) == len(set(names))
    assert [r["tier"] for r in plan] == sorted(r["tier"] for r in plan)  # the important runs start first
    first = {(r["variant"], r["pair"], r["seed"]) for r in plan if r["tier"] <= 2}
    assert first == {(v, p, s) for v in ("loop", "package") for p in ml.PAIRS for s in (0, 1)}
    assert all(r["evaluate"] == (r["variant"] == "package" and r["tier"] in (1, 2, 3, 6)) for r in plan if r["tier"] <= 6)
    later = [r for r in plan if r["tier"] >= 7]  # greedy evaluation of every package run; analysis of both programs
    assert all(r["evaluate"] == ("greedy" if r["variant"].startswith("package") else False) for r in later)
    analysed = {(r["variant"], r["pair"]) for r in later if r["analyse"]}
    assert {("loop", "ru-en"), ("package", "ru-en"), ("loop", "zh-en"), ("package", "zh-en")} <= analysed
    assert all(len([r for r in later if r["analyse"] and (r["variant"], r["pair"]) == v]) >= 6 for v in analysed
               if v[0] in ("loop", "package"))
    assert set(ml.PAIRS.values()) == {"bible-de-en", "bible-fr-en", "bible-it-en", "bible-ru-en", "cmn-eng"}


def test_commands_keep_the_recipe_and_put_the_loop_on_the_gpu_unchanged(tmp_path):
    ml = _load("multilingual")
    runs = {r["name"]: r for r in ml.plan()}
    loop, _ = ml.command(runs["loop_fr-en_s1"], tmp_path, tmp_path / "w", "cuda")
    assert loop[1:4] == [str(REPO / "bench" / "tf32.py"), "--default-cuda", str(REPO / "bench" / "reference_loop.py")]
    assert loop[loop.index("--seed") + 1] == "1" and str(tmp_path / "bible-fr-en.train.tsv") in loop
    package, _ = ml.command(runs["package_fr-en_s1"], tmp_path, tmp_path / "w", "cuda")
    text = " ".join(package)
    assert ml.RECIPE in text and "--amp off" in text and "--device cuda" in text and "--default-cuda" not in text
    cut_once, _ = ml.command(runs["package_cut_once_it-en_s0"], tmp_path, tmp_path / "w", "cuda")
    assert cut_once[-1] == "--no-rebatch"
    assert "--save-model" not in loop and "--save-model" in ml.command(runs["loop_ru-en_s7"], tmp_path, tmp_path, "cuda")[0]


def test_what_runs_after_training(tmp_path):
    "The package is evaluated (with a patched model's patches), each analysed model read by its own program's code."
    ml = _load("multilingual")
    runs = {r["name"]: r for r in ml.plan()}
    after = lambda name: [c[1:] for c in ml.evaluations(runs[name], tmp_path, "cuda", tmp_path / "data")]
    assert [c[c.index("--json") + 1].rsplit("/", 1)[1] for c in after("package_de-en_s0")] == \
        ["eval_greedy.json", "eval_fixed.json", "eval_tuned.json"]
    assert after("loop_de-en_s0") == []  # the loop scores its greedy decoding itself
    package, analysis = after("package_zh-en_s7")
    assert package[:3] == ["-m", "annotated_transformer.cli", "evaluate"] and "--greedy" in package
    assert analysis[:2] == [str(REPO / "bench" / "tf32.py"), str(REPO / "bench" / "stop_analysis.py")]
    [loop] = after("loop_zh-en_s7")
    assert loop[:3] == [str(REPO / "bench" / "tf32.py"), "--default-cuda", str(REPO / "bench" / "stop_analysis.py")]
    assert loop[loop.index("--dev") + 1] == str(tmp_path / "data" / "cmn-eng.dev.tsv")
    [patched] = after("package_torch_like_zh-en_s0")
    assert patched[:3] == [str(REPO / "bench" / "ablate_model.py"), "zero_attn_bias+final_norm+no_generator_bias+torch_ce",
                           "evaluate"]
    patched, patched_analysis = after("package_torch_like_ru-en_s10")  # analysed with the patches it trained with
    assert patched[:3] == [str(REPO / "bench" / "ablate_model.py"), "zero_attn_bias+final_norm+no_generator_bias+torch_ce",
                           "evaluate"]
    assert patched_analysis[patched_analysis.index("--ablate") + 1] == patched[1] and "--ablate" not in analysis


def test_every_recorded_run_names_its_command_commit_device_and_date():
    folder = REPO / "results" / "multilingual"
    records = [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*.json") if not p.name.startswith("_")]
    assert len(records) >= 40
    for r in records:
        assert r["command"] and r["commit"] not in ("", "unknown") and r["date"].startswith("2026-")
        assert r["gpu"] == "NVIDIA H200" and r["torch"].startswith("2.")
        if r["status"] == "done":  # trained to the end, evaluated and analysed as planned
            assert r["dev_curve"][-1]["step"] == r["steps"] == (2000 if r["name"].endswith("_2000steps") else 1000)
            if r["evaluate"]:
                assert set(r["evaluations"]) == ({"greedy", "fixed", "tuned"} if r["evaluate"] is True else {"greedy"})
            if r.get("analyse"):
                assert r["stops"]["program"] == r["variant"].split("_")[0] and r["stops"]["dev_sentences"] == 500
                assert 0 < r["stops"]["p_eos_inside"] < r["stops"]["p_eos_at_end"] < 1


def _git(*args):
    import subprocess
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout.strip()


def test_a_call_records_the_state_of_its_code(tmp_path, monkeypatch):
    "Every record and the call's summary name the commit and what differed from it, as bench/provenance.py takes it."
    import sys
    ml = _load("multilingual")
    run = {"name": "loop_de-en_s0", "tier": 1, "variant": "loop", "pair": "de-en", "seed": 0, "steps": 1000,
           "evaluate": False, "analyse": False}
    monkeypatch.setattr(ml, "plan", lambda steps=1000: [dict(run)])
    monkeypatch.setattr(ml, "command", lambda *a, **k: ([sys.executable, "-c", "pass"], {}))
    monkeypatch.setattr(ml, "evaluations", lambda *a, **k: [])
    monkeypatch.setattr(ml, "collect", lambda *a, **k: {"dev_curve": [], "evaluations": {}})
    monkeypatch.delenv("COMMIT", raising=False)
    out = tmp_path / "out"
    assert ml.main(["run", "--data", str(tmp_path), "--work", str(tmp_path / "work"), "--out", str(out),
                    "--device", "cpu", "--workers", "1", "--deadline", "60"]) == 0
    record = json.loads((out / "loop_de-en_s0.json").read_text(encoding="utf-8"))
    summary = json.loads((out / "_summary.json").read_text(encoding="utf-8"))
    provenance = _load("provenance")
    for r in (record, summary):
        assert r["commit"] == r["git_commit"] == _git("rev-parse", "--short", "HEAD")
        assert r["commit_from"] == "git" and r["worktree_dirty"] == bool(_git("status", "--porcelain"))
        assert r["uncommitted"] == provenance.uncommitted()  # None, or the files that differed and the diff's hash
        if r["uncommitted"] is not None:
            assert r["uncommitted"]["files"] and len(r["uncommitted"]["diff_sha256"]) == 64
    assert record["status"] == "done"


def test_a_copy_without_git_is_not_called_clean_when_it_may_not_be(monkeypatch):
    "On a copy without .git the state comes from the record tools/gpu_wheels.sh wrote; unknown changes are said so."
    ml = _load("multilingual")
    clean = {"git_commit": "abc1234", "worktree_dirty": False, "commit_from": "git.json written 2026 (no git here); "
             "the source files match it"}
    monkeypatch.setattr(ml._provenance, "git_state", lambda: dict(clean))
    assert ml.code_state() == {**clean, "uncommitted": None}
    differ = {**clean, "worktree_dirty": True, "commit_from": "git.json (no git here); the source files DIFFER"}
    monkeypatch.setattr(ml._provenance, "git_state", lambda: dict(differ))
    state = ml.code_state()
    assert state["worktree_dirty"] is True and state["uncommitted"]["files"][0].startswith("unknown: ")


def test_the_history_of_the_records_commits_is_what_git_says():
    """The records in results/multilingual/ name their commit only; _history.json (chapter 24) holds what git's
    history says of those commits, and must still say it."""
    import pytest
    ml = _load("multilingual")
    folder = REPO / "results" / "multilingual"
    recorded = json.loads((folder / "_history.json").read_text(encoding="utf-8"))
    records = [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*.json") if not p.name.startswith("_")]
    assert {r["commit"] for r in records} == {c["commit"] for c in recorded["calls"]}
    assert sum(c["runs"] for c in recorded["calls"]) == len(records) == 121
    try:
        for c in recorded["calls"]:
            _git("cat-file", "-e", c["commit"] + "^{commit}")
    except Exception:  # noqa: BLE001 -- a shallow clone: the commits are not here to ask
        pytest.skip("the records' commits are not in this clone's history")
    fresh = ml.history(folder)
    assert fresh["calls"] == recorded["calls"] and fresh["executed"] == recorded["executed"]


def test_longer_runs_are_kept_apart_from_the_1000_update_means():
    "Tier 11 trains seeds of tier 10 again for 2,000 updates: they get their own cells, rows and commands."
    report = _load("report_translation")
    s = report.multilingual_summary()
    ru = s["ru-en"]
    for program in ("loop", "package"):
        assert len(ru[program]["seeds"]) == len(set(ru[program]["seeds"]))  # no seed counted twice
        assert all(max(curve) == 1000 for curve in ru[program]["curves"].values())
        longer = ru[f"{program}_2000steps"]
        assert longer["seeds"] == [10, 11, 12, 13, 14] and all(max(c) == 2000 for c in longer["curves"].values())
    groups = report.repetition_groups(s)
    assert [v for v, _, _ in report.REPETITION_GROUPS] == list(groups)
    assert all(len(g[key]) == len(g["seeds"]) for g in groups.values() for key in ("ppl", "ratio", "repeating"))
    assert groups["package"]["ppl"] == [ru["package"]["curves"][k][1000] for k in groups["package"]["seeds"]]
    text = report.multilingual_commands().text
    assert "Russian, package, 2,000 updates: seeds 10, 11, 12, 13, 14" in text and "--steps 2000" in text
    unchanged = text.split("Russian, package, unchanged: seeds ")[1].split("\n")[0]
    assert unchanged.split(", ").count("10") == 1
    assert report._seed_list([7, 8, 9, 10]) == "7-10" and report._seed_list([0, 10]) == "0, 10"


# ------------------------------------------------------------------------------------------------ intervals
# The comparisons the chapter states, on made-up numbers small enough to check by hand or against scipy.
import statistics  # noqa: E402

import pytest  # noqa: E402
from scipy import stats as scipy_stats  # noqa: E402


def _cell(ppl, bleu=None, ratio=None):
    "A made-up cell of multilingual_summary: seeds 0, 1, ..., dev perplexities, greedy (BLEU, BP, length ratio)."
    bleu, ratio = bleu or [20.0] * len(ppl), ratio or [1.0] * len(ppl)
    greedy = {k: (b, 1.0, r) for k, (b, r) in enumerate(zip(bleu, ratio))}
    return {"seeds": list(range(len(ppl))), "ppl": ppl, "greedy": greedy, "ppl_mean": statistics.mean(ppl),
            "ppl_sd": statistics.stdev(ppl) if len(ppl) > 1 else 0.0, "ratio_mean": statistics.mean(ratio),
            "fixed": {}, "tuned": {}}


def _summary(report):
    "Every pair alike and inconclusive, except Chinese, where the package is clearly better and steadier."
    s = {pair: {"loop": _cell([10.0, 11.0, 12.0], [20.0, 21.0, 22.0], [1.0, 1.1, 0.9]),
                "package": _cell([10.5, 11.0, 11.5], [20.5, 21.0, 21.5], [1.0, 1.02, 0.98])}
         for pair in report.PAIR_ORDER}
    s["zh-en"] = {"loop": _cell([6.0, 7.0, 8.0, 6.5, 7.5, 6.8], [20.0, 22.0, 24.0, 21.0, 23.0, 22.5],
                                [0.9, 1.1, 1.2, 0.95, 1.05, 1.0]),
                  "package": _cell([5.0, 5.1, 4.9, 5.05, 4.95, 5.0], [30.0, 31.0, 32.0, 31.5, 30.5, 31.2],
                                   [1.0, 1.01, 0.99, 1.0, 1.0, 1.0]),
                  "package_cut_once": _cell([5.4, 5.5, 5.6])}
    return s


def test_gap_keeps_welchs_interval_and_gives_the_change_in_percent_with_fiellers():
    report = _load("report_translation")
    stats = report._stats()
    base, other = [10.0, 11.0, 12.0], [8.0, 8.5, 9.0, 9.5]
    g = report.gap(base, other, lower_is_better=True)
    ci = scipy_stats.ttest_ind(other, base, equal_var=False).confidence_interval(0.95)
    assert (g["interval"].low, g["interval"].high) == pytest.approx((ci.low, ci.high), rel=1e-10)
    # in % of the base's mean: Fieller's interval of mean(other) / mean(base), not the difference's divided by 11
    assert g["pct"] == pytest.approx(stats.ratio(base, other).pct(), rel=1e-12)
    assert g["pct"][0] == pytest.approx(100 * -2.25 / 11)
    assert g["pct"][1:] != pytest.approx((100 * ci.low / 11, 100 * ci.high / 11))  # the denominator's uncertainty
    assert g["verdict"] == "better" and g["excluded"] == 0.0 and g["means"] == (11.0, 8.75)
    # of the 35 ways to split the seven runs into three and four, only the observed one is as far apart
    assert g["exact_p"] == pytest.approx(1 / 35)
    one = report.gap([10.0, 11.0, 12.0], [11.5])  # a single run: Fieller's interval with the one-run variance
    assert one["pct"] == pytest.approx(stats.ratio([10.0, 11.0, 12.0], [11.5]).pct())
    assert one["ratio"].kind == "fieller one run"


def test_gap_percentages_on_the_recorded_runs_are_the_issues_reference_values():
    "Issue 60's independently computed values: French BLEU [-10.5, +36.5] %, deficits above 6.4 / 9.7 % excluded."
    report = _load("report_translation")
    stats = report._stats()
    s = report.multilingual_summary()
    values = lambda pair, prog, m: report.measure_values(s[pair][prog], m)
    bleu = report.multilingual_gaps(s, "bleu")["fr-en"]
    assert bleu["pct"] == pytest.approx(stats.ratio(values("fr-en", "loop", "bleu"), values("fr-en", "package", "bleu")).pct())
    assert tuple(round(x, 1) for x in bleu["pct"]) == (10.0, -10.5, 36.5)
    assert tuple(round(x) for x in report.multilingual_gaps(s, "ratio")["fr-en"]["pct"][1:]) == (-24, 97)
    ppl = report.multilingual_gaps(s, "ppl")
    assert [round(ppl[p]["excluded"], 1) for p in ("de-en", "fr-en")] == [6.4, 9.7]
    assert all(g["pct"] == pytest.approx(stats.ratio(values(p, "loop", "ppl"), values(p, "package", "ppl")).pct())
               for p, g in ppl.items())


def test_gap_says_inconclusive_where_the_interval_crosses_zero_and_bounds_the_deficit():
    report = _load("report_translation")
    g = report.gap([10.0, 12.0, 14.0], [11.0, 13.0, 12.5], lower_is_better=True)
    assert g["verdict"] == "inconclusive" and g["interval"].low < 0 < g["interval"].high
    assert g["excluded"] == pytest.approx(g["pct"][2])  # a deficit above Fieller's upper end is excluded
    bleu = report.gap([20.0, 21.0, 22.0], [25.0, 26.0, 27.0], lower_is_better=False)  # higher BLEU is better
    assert bleu["verdict"] == "better" and bleu["excluded"] == 0.0
    worse = report.gap([20.0, 21.0, 22.0], [18.0, 20.5, 21.0], lower_is_better=False)
    assert worse["excluded"] == pytest.approx(-worse["pct"][1])
    assert report.gap([1.0, 1.1, 0.9], [1.3, 1.4, 1.35], lower_is_better=None)["verdict"] == "longer"
    one = report.gap([10.0, 11.0, 12.0], [11.5])  # a single run: the interval of one more base run
    assert one["interval"].kind == "one run" and one["exact_p"] is None and one["verdict"] == "inconclusive"
    # a base mean not distinguishable from zero: Fieller's interval is unbounded and excludes no deficit
    loose = report.gap([0.1, -0.1, 0.2], [1.0, 2.0, 3.0])
    assert loose["pct"][1:] == (None, None) and loose["excluded"] == math.inf
    assert report._pct_text(loose["pct"]).endswith("[-inf, +inf]")
    assert report._pct_text((-0.04, -3.0, 0.04)) == "0.0 % [-3.0, 0.0]"  # no '-0.0'


def test_holm_family_calls_a_verdict_holm_does_not_keep_suggestive():
    report = _load("report_translation")
    stats = report._stats()
    gaps = {"a": report.gap([10.0, 11.0, 12.0, 10.5], [8.0, 8.5, 9.0, 8.2]),  # better; exact p = 2/70
            "b": report.gap([1.0, 1.1, 0.9, 1.0], [1.3, 1.4, 1.35, 1.32], lower_is_better=None),  # longer, 2/70
            "c": report.gap([10.0, 12.0, 14.0], [11.0, 13.0, 12.5]),  # inconclusive
            "d": report.gap([10.0, 11.0, 12.0], [11.5])}  # one run: its t test
    family = report.holm_family(gaps)
    ps = [gaps["a"]["exact_p"], gaps["b"]["exact_p"], gaps["c"]["exact_p"], gaps["d"]["p"]]
    assert [family[k]["p"] for k in gaps] == ps and family["d"]["test"] == "one run" and family["a"]["test"] == "exact"
    assert [family[k]["holm"] for k in gaps] == stats.holm(ps)
    assert family["a"]["holm"] == pytest.approx(4 * 2 / 70)  # 0.11: not kept
    assert [family[k]["verdict"] for k in gaps] == ["suggestive", "suggestive", "inconclusive", "inconclusive"]
    alone = report.holm_family({"b": gaps["b"]})  # a family of one: nothing to adjust, 'longer' kept
    assert alone["b"]["verdict"] == "longer" and alone["b"]["holm"] == pytest.approx(2 / 70)


def test_every_run_file_is_accounted_for():
    "121 files: 115 trained to the end, 6 stopped at a deadline in training; 8 lost test scores; 4 never started."
    report, multilingual = _load("report_translation"), _load("multilingual")
    a = report.multilingual_accounting()
    files = [p for p in (REPO / "results" / "multilingual").glob("*.json") if not p.name.startswith("_")]
    assert len(a["runs"]) == len(files) == 121 and sum(a["planned"].values()) == len(multilingual.plan()) == 125
    assert sum(r["used"] for r in a["runs"]) == len(report.load_multilingual()) == 115
    assert sorted(r["name"] for r in a["runs"] if not r["trained"]) == sorted(
        r["name"] for r in a["runs"] if r["status"] == "stopped at the deadline (train)")
    assert sum(r["status"] == "stopped at the deadline (evaluate)" for r in a["runs"]) == 8
    assert len(a["not_started"]) == 4 and sum(len(v) for v in a["calls"].values()) == 121
    assert {r["name"] for r in a["runs"]} | set(a["not_started"]) == {r["name"] for r in multilingual.plan()}
    german = {r["name"]: r for r in a["runs"] if r["name"].startswith("package_de-en")}
    assert [n for n, r in german.items() if not r["planned"]] == ["package_de-en_s2", "package_de-en_s3"]


def test_no_exact_test_over_too_many_splits(monkeypatch):
    report = _load("report_translation")
    monkeypatch.setattr(report, "EXACT_LIMIT", 10)  # C(6, 3) = 20 splits: too many now
    assert report.gap([1.0, 2.0, 3.5], [2.0, 3.0, 4.5])["exact_p"] is None


def test_spread_needs_both_tests():
    report = _load("report_translation")
    tight, wide = [5.0, 5.1, 4.9, 5.05, 4.95, 5.0], [3.0, 7.0, 4.0, 6.0, 2.0, 8.0]
    sp = report.spread(wide, tight)
    f = statistics.variance(wide) / statistics.variance(tight)
    assert sp["f_p"] == pytest.approx(2 * scipy_stats.f.sf(f, 5, 5), rel=1e-9)
    assert sp["sd_ratio"] == pytest.approx(statistics.stdev(wide) / statistics.stdev(tight))
    assert sp["perm_p"] < 0.05 and sp["verdict"] == "steadier"
    assert report.spread(tight, wide)["verdict"] == "less steady"
    same = report.spread([1.0, 2.0, 3.0], [11.0, 12.0, 13.0])  # the same spread about another mean
    assert same["perm_p"] == 1.0 and same["verdict"] == "inconclusive"
    assert report.spread_permutation_p(wide, tight) == report.spread_permutation_p(wide, tight)  # seeded


def test_the_printed_comparisons(capsys):
    report = _load("report_translation")
    s = _summary(report)
    report.multilingual_comparison(s)
    text = capsys.readouterr().out
    perplexity = text.split("greedy test BLEU")[0]  # the first of the three blocks
    rows = {line.split()[0]: line for line in perplexity.splitlines() if line.split() and line.split()[0] in
            ("German", "Chinese")}
    assert "inconclusive" in rows["German"] and "package better" in rows["Chinese"]
    assert "in % of loop" in text and "exact p" in text and "greedy length ratio" in text
    assert "Holm p" in text and "Fieller" in text and not re.search(r"-0\.0+(?![0-9])", text)  # no '-0.0'

    gaps = report.multilingual_gaps(s)
    assert gaps["zh-en"]["pct"][2] < 0 < gaps["de-en"]["pct"][2]
    report.multilingual_steadiness(s)
    text = capsys.readouterr().out
    assert "F p" in text and "perm. p" in text and text.count("inconclusive") >= 8
    report.multilingual_ablation(s)
    text = capsys.readouterr().out
    assert "batches cut once" in text and "worse" in text.split("batches cut once")[1].splitlines()[0]


def test_decoding_gains_are_paired_run_by_run():
    report = _load("report_translation")
    s = _summary(report)
    for k, pair in enumerate(report.PAIR_ORDER):
        c = s[pair]["package"]
        c["fixed"] = {0: c["greedy"][0][0] + 3.0 + k, 1: c["greedy"][1][0] + 4.0}
        c["tuned"] = {0: c["fixed"][0] + 0.5 + 0.1 * k} if k < 3 else {}
    gains = report.decoding_gains(s)
    beam, tuned = gains["alpha 0.6 + average minus greedy"], gains["dev-tuned minus alpha 0.6"]
    assert beam["interval"].n == 10 and tuned["interval"].n == 3
    assert tuned["interval"].mean == pytest.approx(0.6) and tuned["exact_p"] == pytest.approx(0.25)  # 2 of 8 flips
    assert beam["exact_p"] == pytest.approx(2 / 2 ** 10)  # every run gains: only the all-plus and all-minus flips


def test_the_remaining_families_are_holm_adjusted():
    "Steadiness (per measure, the larger of the two p), the repetition table (t tests) and the decoding gains (exact)."
    report = _load("report_translation")
    stats = report._stats()
    tests = {"a": (0.01, "steadier"), "b": (0.02, "down"), "c": (0.5, "inconclusive")}
    family = report.holm_tests(tests)
    assert [family[k]["holm"] for k in tests] == stats.holm([0.01, 0.02, 0.5])  # 0.03, 0.04, 0.5: both kept
    assert [family[k]["verdict"] for k in tests] == ["steadier", "down", "inconclusive"]
    assert report.holm_tests({**tests, "d": (0.2, "inconclusive"), "e": (0.3, "inconclusive")})["b"]["verdict"] == \
        "suggestive"  # 4 x 0.02 = 0.08
    s = report.multilingual_summary()
    spreads = report.multilingual_spreads(s, "ppl")
    fam = report.spread_family(spreads)
    assert [fam[p]["p"] for p in report.PAIR_ORDER] == [max(sp["f_p"], sp["perm_p"]) for sp in spreads.values()]
    rep = report.repetition_family(report.repetition_gaps(s))
    assert len(rep) == 9 and all(f["verdict"] in ("up", "down", "suggestive", "inconclusive") for f in rep.values())
    dec = report.decoding_family(report.decoding_gains(s))
    assert list(dec) == list(report.decoding_gains(s)) and all(f["holm"] >= f["p"] for f in dec.values())
