"""The five-language benchmark (bench/multilingual.py, chapter 09b): its plan, its wrapper, and the recorded runs.

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
    assert all(r["evaluate"] == (r["variant"] == "package" and r["tier"] in (1, 2, 3, 6)) for r in plan)
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


def test_every_recorded_run_names_its_command_commit_device_and_date():
    folder = REPO / "results" / "multilingual"
    records = [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*.json") if not p.name.startswith("_")]
    assert len(records) >= 40
    for r in records:
        assert r["command"] and r["commit"] not in ("", "unknown") and r["date"].startswith("2026-")
        assert r["gpu"] == "NVIDIA H200" and r["torch"].startswith("2.")
        if r["status"] == "done":  # trained to the end and, for the package, evaluated three ways
            assert r["dev_curve"][-1]["step"] == r["steps"] == 1000
            if r["evaluate"]:
                assert set(r["evaluations"]) == {"greedy", "fixed", "tuned"}
