"""What every benchmark records next to its numbers: the machine it ran on, and the commit it ran at.

A copy of the checkout without its .git folder (the device machine's, bench/gpu.sh) cannot ask git: there
`git_state` reads the record that `python bench/provenance.py --write .whl/git.json` wrote in the checkout
(tools/gpu_wheels.sh does), and says whether the code it runs is still the code that record describes.
"""
import datetime
import hashlib
import json
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_name() -> str:
    "The CPU's model name (from /proc/cpuinfo on Linux), else what `platform` knows."
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit() -> str:
    "The short commit of the repository, marked when the working tree has uncommitted changes; else unknown."
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True,
                               check=True).stdout.strip()
        return commit + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def uncommitted(root: Path = ROOT, paths: tuple[str, ...] = ("annotated_transformer", "bench")) -> dict | None:
    """What differs from the commit in PATHS (the package and the benchmarks; not their results), taken when a run
    starts: None for a clean checkout, else {"files": ["M annotated_transformer/model.py", ...], "diff_sha256":
    the SHA-256 of `git diff HEAD` over PATHS and of the untracked files' contents}. A record made from such a
    checkout then says which files differed, and the hash tells whether two records ran the same changes."""
    try:
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all", "--",
                                 *paths], capture_output=True, text=True, check=True, timeout=20).stdout
        files = [line.strip() for line in status.splitlines()
                 if line.strip() and not line[3:].startswith("bench/results/")]
        if not files:
            return None
        h = hashlib.sha256(subprocess.run(["git", "-C", str(root), "diff", "HEAD", "--", *paths],
                                          capture_output=True, check=True, timeout=20).stdout)
        for line in files:
            if line.startswith("??") and (root / line[3:]).is_file():
                h.update(line[3:].encode() + b"\0" + (root / line[3:]).read_bytes())
        return {"files": files, "diff_sha256": h.hexdigest()}
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return {"files": ["unknown: git could not be asked"], "diff_sha256": None}


# the files whose content decides the numbers the benchmarks record
SOURCE_GLOBS = ("annotated_transformer/*.py", "annotated_transformer_launcher.py", "bench/*.py", "bench/*.sh")
GIT_RECORD = ROOT / ".whl" / "git.json"  # written by tools/gpu_wheels.sh, carried to the device machine


def source_digest(root: Path = ROOT) -> str:
    "SHA-256 over the names and contents of the SOURCE_GLOBS files: the same code gives the same digest anywhere."
    h = hashlib.sha256()
    for path in sorted({f for g in SOURCE_GLOBS for f in root.glob(g) if f.is_file()}):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True,
                          timeout=20).stdout.strip()


def git_state(record: Path = GIT_RECORD) -> dict:
    """{"git_commit", "worktree_dirty", "commit_from"}: from git; else (a copy without .git) from `record`, with
    worktree_dirty also true when the source files differ from those the record was written for; else unknown."""
    try:
        return {"git_commit": _git("rev-parse", "--short", "HEAD"), "worktree_dirty": bool(_git("status", "--porcelain")),
                "commit_from": "git"}
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        rec = json.loads(Path(record).read_text())
    except (OSError, ValueError):
        return {"git_commit": None, "worktree_dirty": None, "commit_from": "unknown (no git, no record)"}
    same = rec.get("source_digest") == source_digest()
    return {"git_commit": rec.get("git_commit"), "worktree_dirty": bool(rec.get("worktree_dirty")) or not same,
            "commit_from": f"{Path(record).name} written {rec.get('date')} (no git here); the source files "
                           + ("match it" if same else "DIFFER from it")}


def write_git_record(path: Path = GIT_RECORD) -> dict:
    "Write what git says of this checkout now, and the source digest, for a copy that has no .git."
    rec = {"git_commit": _git("rev-parse", "--short", "HEAD"), "worktree_dirty": bool(_git("status", "--porcelain")),
           "changed": _git("status", "--porcelain").splitlines(), "source_digest": source_digest(),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(rec, indent=1) + "\n")
    return rec


if __name__ == "__main__":  # python bench/provenance.py --write .whl/git.json
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        r = write_git_record(Path(sys.argv[2]))
        print(f"wrote {sys.argv[2]}: commit {r['git_commit']}, {len(r['changed'])} uncommitted paths")
    else:
        print(json.dumps({"cpu": cpu_name(), **git_state()}, indent=1))
