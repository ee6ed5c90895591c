"""bench/gpu.py, the one prepared GPU run (issue 49), end to end at toy sizes on the CPU (`--tiny --device cpu`): every
stage writes its results file with its provenance and numbers, copies go to --out, and a stage that fails or runs out
of time is recorded as such in gpu_run.json while the later stages still write theirs. No numbers are checked against
recorded ones and nothing is timed: the GPU run itself measures."""
import json
import math
import os
import re
import subprocess
import sys

from conftest import REPO, subprocess_env

STAGE_FILES = {"training_eager": "training_cpu.json", "decoding": "decoding_cpu.json",
               "translation": "translation_tiny_cpu.json", "training_compile": "training_cpu_compile.json"}


def split_files(folder):
    "A small copy of the reference split's German→English (the GPU run reads the split as such files)."
    from annotated_transformer.reference import reference_split
    folder.mkdir()
    sizes = {"train": 600, "dev": 40, "test": 20}
    for part, lines in reference_split("bible-de-en").items():
        (folder / f"bible-de-en.{part}.tsv").write_text("".join(x + "\n" for x in lines[:sizes[part]]), encoding="utf-8")
    return folder


def gpu_run(tmp_path, *args, env=None):
    results, out = tmp_path / "results", tmp_path / "out"
    cmd = [sys.executable, str(REPO / "bench" / "gpu.py"), "--tiny", "--device", "cpu", "--threads", "1",
           "--results-dir", str(results), "--work-dir", str(tmp_path / "work"), "--out", str(out),
           "--split-dir", str(split_files(tmp_path / "split")), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**subprocess_env(), **(env or {})}, timeout=600)
    summary = json.loads((results / "gpu_run.json").read_text())
    return proc, summary, results, out


def number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_provenance(record, stage):
    assert record["command"] and isinstance(record["command"], str)
    assert isinstance(record["git_commit"], str) and isinstance(record["worktree_dirty"], bool)
    assert isinstance(record["device"], str) and record["device"]
    assert isinstance(record["torch"], str) and record["torch"]
    assert re.match(r"\d{4}-\d\d-\d\d", record["date"])
    assert number(record["wall_seconds"]) and record["wall_seconds"] > 0
    assert record["gpu_run"]["stage"] == stage and record["gpu_run"]["commands"] and record["gpu_run"]["tiny"]


def test_every_stage_writes_its_results(tmp_path):
    proc, summary, results, out = gpu_run(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert {s: e["status"] for s, e in summary["stages"].items()} == dict.fromkeys(STAGE_FILES, "ok"), summary
    records = {}
    for stage, name in STAGE_FILES.items():
        assert summary["stages"][stage]["result"] == name
        records[stage] = json.loads((results / name).read_text())
        check_provenance(records[stage], stage)
        assert json.loads((out / name).read_text()) == records[stage]  # copied to --out as written

    for stage in ("training_eager", "training_compile"):
        r = records[stage]
        assert r["config"]["compile"] == (stage == "training_compile") and r["config"]["warmup_shapes"]
        for model in ("ours", "torch_nn_transformer"):
            res = r["results"][model]
            assert number(res["tokens_per_s_median"]) and res["tokens_per_s_median"] > 0
            assert number(res["model_flops_per_s_median"]) and number(res["counted_flops_per_s_median"])
            assert r["warmup"][model]["shapes"] == r["config"]["distinct_shapes"]  # every shape before timing
        assert number(r["ratio"]) and r["ratio"] > 0
        assert r["flop_check"]["flop_counter_mode"] == r["flop_check"]["training_flops_padded_shapes"]
    assert number(records["training_compile"]["compile_seconds"]) and records["training_eager"]["compile_seconds"] is None

    d = records["decoding"]
    assert [row["tokens"] for row in d["results"]] == [4, 8] and d["beam_recompute"]
    for row in d["results"]:
        assert all(number(row[k]) and row[k] > 0 for k in ("greedy_cache_ms", "greedy_recompute_ms", "beam_cache_ms",
                                                           "beam_recompute_ms"))
        assert row["tokens_identical"] is True and row["beam_tokens_identical"] is True  # on a CPU they agree
    assert d["all_tokens_identical"] is True

    t = records["translation"]
    assert t["train"]["exit_status"] == 143 and t["train"]["stopped_by"] == "SIGTERM"  # stopped by time
    assert t["train"]["steps"] > 0 and t["train"]["checkpoints"] and number(t["train"]["tokens_per_s"])
    assert number(t["dev"]["ppl"]) and t["dev"]["ppl"] > 1 and t["data"]["src_lang"] == "de"
    beam = f"beam4_avg{min(5, len(t['train']['checkpoints']))}"
    for name in ("greedy", beam):
        scores = t["test"][name]
        assert number(scores["bleu"]) and number(scores["chrf"]) and scores["sentences"] == 4
        assert scores["bleu_signature"].startswith("nrefs:1|") and scores["chrf_signature"].startswith("nrefs:1|")
    assert len(t["gpu_run"]["commands"]) == 3 and t["gpu_run"]["commands"][0].startswith("annotated-transformer train")

    # what the device machine returns: at most 8 files, names of letters, digits and ._- alone
    names = sorted(os.listdir(out))
    assert "gpu_run.json" in names and "gpu_run.log" in names and len(names) <= 8
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", n) for n in names)


def test_a_failed_or_late_stage_is_recorded_and_the_next_ones_run(tmp_path):
    "The first stage fails (GPU_RUN_FAIL), the last runs out of time (a 1-second limit); the one between still runs."
    proc, summary, results, out = gpu_run(tmp_path, "--stages", "training_eager,decoding,translation",
                                          "--limit", "translation=1", env={"GPU_RUN_FAIL": "training_eager"})
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    stages = summary["stages"]
    assert list(stages) == ["training_eager", "decoding", "translation"]
    assert stages["training_eager"]["status"] == "failed" and "status 3" in stages["training_eager"]["error"]
    assert stages["decoding"]["status"] == "ok" and stages["translation"]["status"] == "timeout"
    assert not (results / "training_cpu.json").exists() and not (results / "translation_tiny_cpu.json").exists()
    check_provenance(json.loads((results / "decoding_cpu.json").read_text()), "decoding")
    assert json.loads((out / "gpu_run.json").read_text()) == summary and (out / "decoding_cpu.json").is_file()
