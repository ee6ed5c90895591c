"""bench/provenance_audit.py: every record the book's chapters read that was made from a checkout with uncommitted
changes is audited (kept with a reason, run again, or excluded) or, where the record says so only in words, noted with
what differed; the chapters' loaders leave the excluded out."""
import dataclasses
import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import provenance_audit as audit  # noqa: E402
from annotated_transformer import TrainConfig  # noqa: E402

_JSON = json.loads((REPO / "bench" / "results" / "provenance_audit.json").read_text())
AUDIT, NOTED = _JSON["records"], _JSON["noted"]


def _load(name):
    spec = importlib.util.spec_from_file_location(f"audit_{name}", REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_modified_record_is_audited():
    """Every record under bench/results/ and results/ (a superset of those the book reads) that says in any way that
    it was made from a changed checkout (`modified: true`, a commit string with "uncommitted" or "working tree",
    `worktree_dirty: true` with changed package or bench files, ...) is audited, or noted with what differed."""
    marked = audit.marked()
    audited = {e["record"] for e in AUDIT}
    noted = {e["record"] for e in NOTED}
    assert marked and set(marked) <= audited | noted, sorted(set(marked) - audited - noted)
    assert not audited & noted and noted == set(audit.NOTED)
    # a record marked only in words is noted, not audited as if `modified: true` said it
    assert all(any(m.endswith(".modified") for m in marked[name]) for name in audited if name in marked)
    for e in NOTED:
        assert e["marks"] == marked[e["record"]] and len(e["reason"]) > 80
    for e in AUDIT:
        assert e["decision"] in ("kept", "rerun", "excluded") and len(e["reason"]) > 40
        assert isinstance(e["commits_during_run"], list) and e["commit"]  # what git knows of the run's time
        if e["decision"] == "rerun":  # the record now in the repository was made from a clean checkout
            assert e["now"]["modified"] is False and e["now"]["commit"] != e["commit"]
            assert e["record"] not in marked
    # chapter 26's positions were run again from a clean checkout: no mark left on them
    positions = sorted((REPO / "bench" / "results" / "positions").glob("*.json"))
    assert len(positions) == 12 and not {p.relative_to(REPO).as_posix() for p in positions} & set(marked)


def test_marks_finds_every_way_a_record_says_its_checkout_differed():
    clean = [{"provenance": {"commit": "abc1234", "modified": False}},
             {"commit": "42d41b4 (by the git log)"},
             {"provenance": {"git": {"git_commit": "15e1851", "worktree_dirty": True}, "uncommitted": None}},
             {"provenance": {"commit": "2c998a5", "changed_files": []}, "runs": [{"commit": "9d735f7"}]}]
    assert [audit.marks(r) for r in clean] == [[]] * 4
    assert audit.marks({"provenance": {"modified": True}}) == ["provenance.modified"]
    assert audit.marks({"runs": [{}, {"commit": "75f5569 (with uncommitted changes)"}]}) == ["runs[1].commit"]
    assert audit.marks({"git_commit": "96af4e9 (the working tree held its changes)"}) == ["git_commit"]
    assert audit.marks({"commit": "57d765a + bench/reference_loop.py"}) == ["commit"]
    assert audit.marks({"git_commit": "04f40ad with bench/x.py as committed in 7514eea"}) == ["git_commit"]
    assert audit.marks({"git_commit": "15e1851", "worktree_dirty": True}) == ["worktree_dirty"]
    dirty = {"provenance": {"git": {"worktree_dirty": True}, "uncommitted": {"files": ["M bench/x.py"]}}}
    assert audit.marks(dirty) == ["provenance.git.worktree_dirty", "provenance.uncommitted"]
    assert audit.marks({"changed_files": ["annotated_transformer/model.py"]}) == ["changed_files"]


SEVEN = {f"bench/results/table3/mini_{v}_s2.json"
         for v in ("A_h32", "C_N2", "C_N8", "C_d256", "C_d1024", "C_ff1024", "C_ff4096")}


def test_a_replay_equal_over_the_first_updates_kept_no_record():
    """Chapter 25's seven seed-2 records made beside the uncommitted decoder_only module replayed equal at their own
    commit for 40 updates and were kept on that ground; they were run again from a clean checkout all the same, and
    no record is kept on a replay any more. The new records are the same runs (same commands, settings and data)
    whose curves part from the old ones after the replayed 40 updates, never before."""
    assert not any(e["decision"] == "kept" for e in AUDIT)
    entries = {e["record"]: e for e in AUDIT if e["record"] in SEVEN}
    assert set(entries) == SEVEN
    for name, e in entries.items():
        r = e["replay_at_own_commit"]
        assert r["equal"] and r["replay_commit"] == e["commit"] and "40 updates" in r["replayed"], name
        assert e["decision"] == "rerun" and "9a943b5" in e["reason"] and e["now"]["commit"] == "9a943b5", name
        parted = e["before_and_after"]["curves_part_at_update"]
        assert parted is None or parted > 40, name
        old, new = _run_again(name)
        assert old["provenance"]["modified"] and e["before_and_after"]["dev_ppl"] == [
            round(old["dev_ppl"], 4), round(new["dev_ppl"], 4)], name
    for v in ("A_h1", "A_h4"):  # the chapter's two other records run again (from 6a15d8c): the same runs too
        assert _run_again(f"bench/results/table3/mini_{v}_s2.json")[0]["provenance"]["modified"]


def test_before_and_after_gives_the_headline_numbers_and_where_the_curves_part():
    old = {"dev_ppl": 30.123456, "greedy": {"bleu": 10.0}, "train_curve": [{"step": 20, "loss": 5}, {"step": 40,
                                                                                                     "loss": 4}]}
    new = {"dev_ppl": 30.5, "greedy": {"bleu": 9.5}, "train_curve": [{"step": 20, "loss": 5}, {"step": 40, "loss": 3}]}
    assert audit.before_and_after(old, new) == {"dev_ppl": [30.1235, 30.5], "greedy.bleu": [10.0, 9.5],
                                                "curves_part_at_update": 40}
    assert audit.before_and_after({"dev_ppl": 2.0, "dev_curve": [{"step": 100}]},
                                  {"dev_ppl": 2.0, "dev_curve": [{"step": 100}]}) == {
        "dev_ppl": [2.0, 2.0], "curves_part_at_update": None}


MEASURED = {"tokens_per_update", "target_tokens_per_update", "train_seconds", "train_curve", "dev_curve", "dev_nll",
            "dev_ppl", "greedy", "beam4_avg5"}  # what a run measures: the rest of its record is its settings


def _run_again(name):
    """The record NAME now in the repository, checked to be the same run as the one it replaced (the version at
    BEFORE_RERUN): everything but the provenance's commit, date and times and what the run measured is unchanged, and
    it was made from a clean checkout. A chapter-25 record's `train_config` may hold settings added to TrainConfig
    since the old run, written at their defaults (the old behaviour)."""
    new = json.loads((REPO / name).read_text())
    old = json.loads(audit._git("show", f"{audit.BEFORE_RERUN}:{name}"))
    assert not new["provenance"]["modified"] and "uncommitted" not in new["provenance"], name
    assert new["provenance"]["commit"] != old["provenance"]["commit"], name
    assert set(new) == set(old) and set(new["provenance"]) == set(old["provenance"]), name
    if "train_config" in new:
        added = {k: v for k, v in new["train_config"].items() if k not in old["train_config"]}
        defaults = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
        assert added == {k: defaults[k] for k in added}, name
        new = {**new, "train_config": {k: v for k, v in new["train_config"].items() if k not in added}}
    assert {k: v for k, v in new.items() if k not in MEASURED | {"provenance"}} == {
        k: v for k, v in old.items() if k not in MEASURED | {"provenance"}}, name
    assert all(new["provenance"][k] == old["provenance"][k] for k in ("command", "device", "torch", "python")
               if k in old["provenance"]), name
    return old, new


def test_a_record_whose_replay_differs_was_run_again_and_its_replays_kept():
    """No record is kept on a replay that differs from it. Chapter 28's four translation records made from changed
    code replayed different at their own commits, and so did the two records of their folder then made from clean
    checkouts (replayed the same way): the replay could not tell whether the changes mattered, so the four were run
    again from a clean checkout and their records replaced, and the two clean ones as well, at the same commit, so
    that every pair of masks ran at one commit. The replays stay in bench/results/replay/ as the history of that
    check (the audit still shows them, of the old records); each new record is the same run as the old one and gives
    the replays' number after 100 updates."""
    replays = [r for path in (REPO / "bench" / "results" / "replay").glob("*.json")
               for r in json.loads(path.read_text())["replays"]]
    differing = {e["record"]: e for e in AUDIT if e["replay_at_own_commit"] and not e["replay_at_own_commit"]["equal"]}
    assert set(differing) == {f"bench/results/decoder_only/mt_{a}_s{s}.json"
                              for a, s in (("causal", 0), ("causal", 1), ("prefix", 0), ("prefix", 2))}
    commits = set()
    for name, e in differing.items():
        r = e["replay_at_own_commit"]
        assert e["decision"] == "rerun" and r["replay_commit"] == e["commit"], name  # a replay of the old record
        controls = [x for x in replays if Path(x["record"]).parent == Path(name).parent
                    and x["record_modified"] is False and x["replay_commit"] == x["record_commit"]
                    and x["replayed"] == r["replayed"]]
        assert controls and not any(x["equal"] for x in controls), name
        assert "cannot tell whether the changes mattered" in e["reason"] and "Run again" in e["reason"], name
        old, new = _run_again(name)
        assert old["provenance"]["modified"] and new["provenance"]["commit"] == e["now"]["commit"], name
        commits.add(new["provenance"]["commit"])
    # the two controls: clean records whose replays differed too, run again at the four's commit
    controls = {x["record"]: x for x in replays if x["record_modified"] is False
                and Path(x["record"]).parent.name == "decoder_only" and x["replay_commit"] == x["record_commit"]}
    assert set(controls) == {f"bench/results/decoder_only/mt_{a}_s{s}.json" for a, s in (("prefix", 1),
                                                                                           ("causal", 2))}
    for name, x in controls.items():
        assert not x["equal"] and name not in {e["record"] for e in AUDIT}, name  # clean: nothing to audit
        old, new = _run_again(name)
        assert old["provenance"]["commit"] == x["record_commit"] and not old["provenance"]["modified"], name
        commits.add(new["provenance"]["commit"])
    assert len(commits) == 1  # all six at one commit
    folder = REPO / "bench" / "results" / "decoder_only"
    assert {json.loads(p.read_text())["provenance"]["commit"] for p in folder.glob("mt_*.json")} == commits
    # the new runs, from a clean checkout of a later commit, give the replays' number after 100 updates
    for name in set(differing) | set(controls):
        new = json.loads((REPO / name).read_text())
        again = [x for x in replays if x["record"] == name]
        assert {x["compared"][0]["replayed"] for x in again} == {new["dev_curve"][0]["dev_nll"]}, name
        assert new["dev_curve"][0]["step"] == 100 and again[0]["compared"][0]["what"] == "dev nll @ 100"


def test_the_json_is_what_the_script_writes():
    assert audit.audit() == AUDIT and audit.noted() == NOTED


def test_the_loaders_leave_the_excluded_records_out():
    gone = audit.excluded()
    assert gone == {e["record"] for e in AUDIT if e["decision"] == "excluded"} and gone
    t3 = _load("table3")
    for folder in ("table3", "table3_mini400"):
        names = {r["name"] for r in t3.load_records(REPO / "bench" / "results" / folder)}
        out = {Path(g).stem for g in gone if Path(g).parent.name == folder}
        assert out and not out & names, folder
        assert {"mini_base_s0", "mini_A_h1_s0"} <= names  # the rest are read
    d = _load("decoder_only")
    assert len(d.load_records(kind="lm")) == 18
