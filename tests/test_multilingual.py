"""The five-language benchmark (bench/multilingual.py, chapter 09e): its plan, its wrapper, and the recorded runs.

The runs themselves need a GPU and minutes each; what CI can check is that the wrapper that puts the independent
loop on a GPU shares no code with the package, that the plan is what the chapter says, and that every recorded run
names its command, commit, device and date."""
import ast
import importlib.util
import json
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
