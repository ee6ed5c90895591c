"""Every record the book cites that was made from a working tree with uncommitted changes (`modified: true`), what
could have differed, and what was done about it.

Those runs kept no diff. What git still knows is which files the commits made during each run changed (from the
run's start to an hour after its end: the uncommitted work of the time is what those commits went on to commit).
For each record this script lists them, the package's modules among them, the replay of its first updates at its
own commit (`bench/replay.py --checkout`, clean), and the decision, one of

- `kept`: nothing the run executes could have differed (the reason says why, from the diffs);
- `rerun`: the run was repeated from a clean checkout and its record replaced (the entry keeps the old provenance);
- `excluded`: the difference may have touched code the run executes; the loaders of the chapters leave it out.

    python bench/provenance_audit.py            # writes bench/results/provenance_audit.json

Records made from now on cannot end up here silently: a modified checkout is refused by the runners' provenance
(`bench/provenance.py`: `uncommitted`) and named with its files.

Older records say it in other ways too: a commit string that says so ("(with uncommitted changes)", "the working tree
held its changes", "+ bench/reference_loop.py", ...), `worktree_dirty: true`, a non-empty `uncommitted` or
`changed_files`. `marks` finds every such place in every record under bench/results/ and results/ (a superset of the
records the book reads); a record marked only that way, often one file holding several runs, is listed in `NOTED`
with what differed and what the book does with it.
"""
from __future__ import annotations

import datetime
import functools
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "provenance_audit.json"

_NEW_MODULE = ("the package's decoder_only module (and bench/decoder_only.py) existed in the working tree but not yet "
               "in a commit (committed in 87c3028): an untracked module marks the package modified")
_SEVEN = (_NEW_MODULE + "; the commits during the run changed decoder_only.py and architecture.py (which train and "
          "evaluate do not import), added decoding.attention_weights (which evaluate does not call) and its export "
          "in __init__.py, and the first 40 updates replayed at 4c4f0d8, clean, equal the record. Kept on that "
          "ground at first; but 40 updates do not show the rest of a run the same, so it was run again from a "
          "clean checkout of 9a943b5 (2026-11-29) with the record's own commands, record replaced")
_MT = ("the commits during the run changed trainer.py, train_command.py and translate.py (Trainer, the train command "
       "and Translator, which this script's runs do not call) and exports in __init__.py. Replayed from a clean "
       "checkout of its own commit, its first 100 updates did not give its dev nll (they differed by up to 0.002), "
       "but neither did those of the two translation records then made from clean checkouts, and the replays at its "
       "own commit and at a later one agreed (bench/results/replay/decoder_only_mt*.json, kept as the history of the "
       "check): the replay cannot tell whether the changes mattered. Run again from a clean checkout of 102727a "
       "(2026-11-29) with the record's own command, record replaced, and so were the two clean ones, so that every "
       "pair of masks ran at one commit; the new runs' dev nll after 100 updates equals the replays'")
DECISIONS = {
    **{f"bench/results/table3/mini_{v}_s2.json": ("rerun", _SEVEN)
       for v in ("A_h32", "C_N2", "C_N8", "C_d256", "C_d1024", "C_ff1024", "C_ff4096")},
    **{f"bench/results/table3/mini_{v}_s2.json": (
        "rerun", "the commits during the run changed model.py, multihead.py and trainer.py, which train executes: "
        "run again from a clean checkout of 6a15d8c (2026-11-29), record replaced") for v in ("A_h1", "A_h4")},
    **{f"bench/results/table3/mini_E_relative_s{s}.json": (
        "excluded", "the commits during the runs changed model.py, multihead.py and positional.py, the relative "
        "positions these runs execute; chapter 26 compares relative positions on clean runs") for s in (0, 1, 2)},
    **{f"bench/results/table3_mini400/{n}.json": (
        "excluded", "the commits during the run changed model.py and multihead.py (d9fcc06 itself made weight "
        "sharing the default), which train executes") for n in ("mini_B_dk16_s1", "mini_B_dk32_s0")},
    **{f"bench/results/decoder_only/lm_{v}_s{s}.json": (
        "rerun", _NEW_MODULE + ", and changed during the runs: all 18 language-model runs were run again from a "
        "clean checkout of 6a15d8c (2026-11-29), records replaced")
       for v in ("base", "rmsnorm", "swiglu", "rope", "gqa", "modern") for s in (0, 1, 2)
       if (v, s) not in (("rmsnorm", 2), ("swiglu", 2))},  # those two were clean, and were run again all the same
    **{f"bench/results/decoder_only/mt_{a}_s{s}.json": ("rerun", _MT)
       for a, s in (("causal", 0), ("causal", 1), ("prefix", 0), ("prefix", 2))},
    # mt_prefix_s1 and mt_causal_s2 were clean (da5f0ae), and were run again all the same, at the same commit
}
# records marked in words rather than by `modified: true` (see `marks`): what differed, and what the book does with them
NOTED = {
    "bench/results/why_self_attention_first.json": (
        "chapter 23's first record, kept beside its clean rerun (bench/results/why_self_attention.json, made with no "
        "changed files), from which the chapter's measurements come; the chapter says that the first record was made "
        "from a working tree with changes that were not committed, and prints its commit with that mark"),
    "bench/results/inner_dropout.json": (
        "the two runs reference_recipe.inner_dropout_off (deen_paperdrop_s0, s1) started less than two minutes before "
        "96af4e9 was committed, from the working tree that held that commit's changes (the inner_dropout switch in "
        "model.py, train_command.py, compat.py and torch_compare.py), as their commit says; they ran with the switch "
        "off, the default 96af4e9 made. Chapter 16 prints their perplexities; chapter 22 ran deen_paperdrop_s0's "
        "command again from a clean checkout (results/attention_heads.json) and quotes both"),
    "bench/results/init_ablation_cpu.json": (
        "the first ablation (7b111bd) ran from a working tree holding the corpus builder and --arch torch, committed "
        "in 57a398f 19 minutes after it ended (the record names them); its two rows of our model were run again "
        "from committed code after a5ff418 (rerun_after_a5ff418: 04f40ad with bench/init_ablation.py as committed in "
        "7514eea) and reproduced to every printed digit; its nn.Transformer row of seed 0 was not run again. The "
        "seeds 1 and 2 (seeds_after_a5ff418) ran at 7514eea with only notebooks uncommitted: the package's modules "
        "and the script were committed"),
    "results/reference_split.json": (
        "deen_fixed_s0 (ours_source_allowance_2) started 11 minutes before 8ef194f was committed, from the working "
        "tree that held its changes (the embeddings' N(0, 1/d_model) start in model.py, the token budget counting "
        "padded target tokens in training.py), and the first reference_loop run used 57d765a plus "
        "bench/reference_loop.py as 8ef194f committed it (a script apart from the package), as their commits say; "
        "chapter 22 prints those commit strings where it lists the runs"),
}
MARKED_COMMIT = re.compile(r"uncommitted|working tree|dirty|\+| with ")  # a commit string that says the tree differed
RECORDS = ("bench/results", "results")  # every record the book reads lives under these
BEFORE_RERUN = "6a15d8c"  # a commit holding the old records of all those run again (their old provenance)


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()


def window(date: str, seconds: float) -> tuple[list[str], list[str]]:
    "The commits made from DATE to an hour after the run's end, and the package files they changed."
    start = datetime.datetime.fromisoformat(date.replace("Z", "+00:00"))
    end = start + datetime.timedelta(seconds=seconds + 3600)
    commits = _git("log", "--all", "--format=%h", f"--since={start.isoformat()}", f"--until={end.isoformat()}").split()
    return commits, sorted(set().union(*map(_package_files, commits)))


@functools.lru_cache(maxsize=None)
def _package_files(commit: str) -> frozenset[str]:
    "The package's .py files COMMIT changed (runs of one session share their commits: asked once each)."
    return frozenset(f for f in _git("show", "--name-only", "--format=", commit).split()
                     if f.startswith("annotated_transformer/") and f.endswith(".py"))


def replays() -> tuple[dict, dict]:
    """From bench/results/replay/*.json: {record: its replay at its own commit} and {record: [its replays at other
    commits]}, each replay in short (where, what, how many numbers, the largest difference, all equal or not)."""
    own, other = {}, {}
    for path in sorted((ROOT / "bench" / "results" / "replay").glob("*.json")):
        for r in json.loads(path.read_text())["replays"]:
            short = {k: r[k] for k in ("replay_commit", "replayed", "n_compared", "max_abs_difference", "equal")}
            if r["replay_commit"] == r["record_commit"]:
                own[r["record"]] = short
            else:
                other.setdefault(r["record"], []).append(short)
    return own, other


def audit() -> list[dict]:
    found, elsewhere = replays()
    entries = []
    for name, (decision, reason) in DECISIONS.items():
        record = json.loads((ROOT / name).read_text())
        p = record["provenance"]
        if decision == "rerun":
            if p.get("modified"):
                raise SystemExit(f"{name}: marked rerun, but its record is still modified")
            before = json.loads(_git("show", f"{BEFORE_RERUN}:{name}"))
            old = before["provenance"]
        else:
            old = p
        if not old.get("modified"):
            raise SystemExit(f"{name}: not made from a modified checkout, nothing to audit")
        commit, date, w = old["commit"], old["date"], old["wall_seconds"]
        commits, files = window(date, w["total"] if isinstance(w, dict) else w)
        entries.append({"record": name, "decision": decision, "reason": reason, "commit": commit, "date": date,
                        "commits_during_run": commits, "package_files_changed": files,
                        "replay_at_own_commit": found.get(name), "replays_at_other_commits": elsewhere.get(name, []),
                        "now": {k: p.get(k) for k in ("commit", "modified")}}
                       | ({"before_and_after": before_and_after(before, record)} if decision == "rerun" else {}))
    return entries


HEADLINE = (("dev_ppl",), ("greedy", "bleu"), ("beam4_avg5", "bleu"))  # what a run reports, where it has it


def before_and_after(old: dict, new: dict) -> dict:
    """What running again changed: each HEADLINE number of the old record and the new ([old, new], 4 decimals), and
    the first logged update where their curves part (training curve, else dev curve; None if they never do)."""
    def get(record, path):
        for key in path:
            record = record.get(key) if isinstance(record, dict) else None
        return record
    out = {".".join(path): [round(get(old, path), 4), round(get(new, path), 4)]
           for path in HEADLINE if get(old, path) is not None and get(new, path) is not None}
    curve = "train_curve" if "train_curve" in old else "dev_curve"
    out["curves_part_at_update"] = next((a["step"] for a, b in zip(old[curve], new[curve]) if a != b), None)
    return out


def marks(record) -> list[str]:
    """Every place where RECORD says it was made from a checkout with changes, as JSON paths: `modified: true`; a
    `commit` or `git_commit` string that says so (MARKED_COMMIT); `worktree_dirty: true`, unless the same provenance's
    `uncommitted` is null (then the package and bench/ were clean, only other files differed); a non-empty
    `uncommitted` or `changed_files`."""
    found = []

    def walk(node, path: str, code_clean: bool) -> None:
        if isinstance(node, dict):
            code_clean = node["uncommitted"] is None if "uncommitted" in node else code_clean
            for key, value in node.items():
                here = f"{path}.{key}" if path else key
                if (key == "modified" and value is True
                        or key in ("commit", "git_commit") and isinstance(value, str) and MARKED_COMMIT.search(value)
                        or key == "worktree_dirty" and value is True and not code_clean
                        or key in ("uncommitted", "changed_files") and value):
                    found.append(here)
                walk(value, here, code_clean)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]", code_clean)

    walk(record, "", False)
    return found


def marked(root: Path = ROOT) -> dict[str, list[str]]:
    "{record: its marks} for every record under RECORDS that has one (this audit's own JSON aside)."
    out = {}
    for folder in RECORDS:
        for path in sorted((root / folder).rglob("*.json")):
            name = path.relative_to(root).as_posix()
            if path != OUT and (found := marks(json.loads(path.read_text(encoding="utf-8")))):
                out[name] = found
    return out


def noted() -> list[dict]:
    "The NOTED records with their marks (each must still carry one)."
    entries = []
    for name, reason in NOTED.items():
        found = marks(json.loads((ROOT / name).read_text(encoding="utf-8")))
        if not found:
            raise SystemExit(f"{name}: listed in NOTED, but nothing in it says its checkout differed")
        entries.append({"record": name, "marks": found, "reason": reason})
    return entries


def excluded(root: Path = ROOT) -> set[str]:
    "The records the audit excludes, as paths relative to the repository (the loaders leave them out)."
    path = root / "bench" / "results" / "provenance_audit.json"
    if not path.exists():
        return set()
    return {e["record"] for e in json.loads(path.read_text())["records"] if e["decision"] == "excluded"}


def main() -> int:
    entries, listed = audit(), noted()
    OUT.write_text(json.dumps({"what": __doc__.split("\n\n")[0], "records": entries, "noted": listed}, indent=1)
                   + "\n")
    counts = {d: sum(e["decision"] == d for e in entries) for d in ("kept", "rerun", "excluded")}
    print(f"{OUT.relative_to(ROOT)}: {len(entries)} records, " + ", ".join(f"{n} {d}" for d, n in counts.items())
          + f"; {len(listed)} marked in words, noted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
