"""bench/provenance_audit.py: every record the book's chapters read that was made from a checkout with uncommitted
changes is audited (kept with a reason, run again, or excluded), and the chapters' loaders leave the excluded out."""
import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import provenance_audit as audit  # noqa: E402

AUDIT = json.loads((REPO / "bench" / "results" / "provenance_audit.json").read_text())["records"]


def _load(name):
    spec = importlib.util.spec_from_file_location(f"audit_{name}", REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_modified_record_is_audited():
    def made_modified(path):
        record = json.loads(path.read_text())
        return isinstance(record, dict) and isinstance(record.get("provenance"), dict) \
            and record["provenance"].get("modified") is True
    modified = {p.relative_to(REPO).as_posix() for p in (REPO / "bench" / "results").rglob("*.json")
                if made_modified(p)}
    audited = {e["record"] for e in AUDIT}
    assert modified and modified <= audited, sorted(modified - audited)
    for e in AUDIT:
        assert e["decision"] in ("kept", "rerun", "excluded") and len(e["reason"]) > 40
        assert isinstance(e["commits_during_run"], list) and e["commit"]  # what git knows of the run's time
        if e["decision"] == "rerun":  # the record now in the repository was made from a clean checkout
            assert e["now"]["modified"] is False and e["now"]["commit"] != e["commit"]


def test_kept_runs_replay_equal_at_their_own_commit_where_replayed():
    for e in AUDIT:
        if e["decision"] == "kept" and "/table3/" in e["record"]:
            r = e["replay_at_own_commit"]
            assert r and r["equal"] and r["replay_commit"] == e["commit"], e["record"]


def test_a_kept_record_that_replays_different_has_clean_controls_that_do_too():
    """A kept record whose replay at its own commit differs is kept only where the records of its folder made from
    clean checkouts, replayed the same way at their own commits, differ too: then the replay reproduces none of
    them and cannot tell whether the changes mattered, and the reason says so."""
    replays = [r for path in (REPO / "bench" / "results" / "replay").glob("*.json")
               for r in json.loads(path.read_text())["replays"]]
    for e in AUDIT:
        r = e["replay_at_own_commit"]
        if e["decision"] == "kept" and r and not r["equal"]:
            controls = [x for x in replays if Path(x["record"]).parent == Path(e["record"]).parent
                        and x["record_modified"] is False and x["replay_commit"] == x["record_commit"]
                        and x["replayed"] == r["replayed"]]
            assert controls and not any(x["equal"] for x in controls), e["record"]
            assert "cannot tell whether the changes mattered" in e["reason"], e["record"]


def test_the_json_is_what_the_script_writes():
    assert audit.audit() == AUDIT


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
