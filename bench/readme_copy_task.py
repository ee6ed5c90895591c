"""The README's first run (the copy task of chapter 10) run as printed, and its numbers recorded.

The numbers that README.md and README.zh-CN.md quote for it (exact copies of the 500 held-out sequences,
seconds) come from this record.

    python bench/readme_copy_task.py        # writes bench/results/readme_copy_task.json (about 2 minutes, 1 thread)

Three runs, in a fresh temporary folder, with the `annotated-transformer` of the running Python and the package of
this checkout (PYTHONPATH):
* `first`: the README's first command, exactly as printed there (600 steps, into runs/copy);
* `resumed`: the README's second command in the same folder (`--resume` to step 800);
* `inner_dropout`: the first command with `--inner-dropout` added (the setting before the defaults became the
  paper's), into its own folder.
The commands are read from README.md's ```bash blocks, so the record is of what the README prints (the test in
tests/test_readme.py checks that the record's commands are the README's and that every percentage and number of
seconds the README states for this run is in the record at the precision printed).

For each run the record keeps the exact-copy percentage as the command printed it, the wall-clock seconds of the
whole command (start-up, data, training, the final greedy decoding), the CPU seconds it used (user + system, from
`resource.getrusage(RUSAGE_CHILDREN)`), the thread line it printed and the load average before and after. The
machine may be shared: the load average says how busy it was, and wall against CPU seconds how much of the time the
command waited for a core.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import cpu_name, git_commit  # noqa: E402  (bench/provenance.py, next to this script)

RECORD = ROOT / "bench" / "results" / "readme_copy_task.json"
EXACT = re.compile(r"exact copies of the (\d+) held-out sequences \(greedy decoding\): ([\d.]+)%")


def readme_commands(readme: Path = ROOT / "README.md") -> list[str]:
    "The README's two copy-task commands (the first run, then the resume), continuation lines joined."
    text = readme.read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M):
        for command in re.sub(r"\\\n\s*", " ", block).splitlines():
            command = re.sub(r"\s+#\s.*$", "", command).strip()
            if command.startswith(("annotated-transformer train --data copy",
                                   "annotated-transformer train --resume --out runs/copy")):
                commands.append(re.sub(r"\s+", " ", command))
    assert len(commands) == 2, f"README.md: expected the two copy-task commands, found {commands}"
    return commands


def run(command: str, cwd: Path) -> dict:
    "Run one README command in `cwd`; its exact-copy percentage, seconds and thread line."
    load = os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command}\nexit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    exact = EXACT.search(done.stdout)
    threads = re.search(r"^training on .*?\)", done.stdout, re.M)
    if not exact:
        raise SystemExit(f"{command}: no exact-copy line in its output\n{done.stdout[-2000:]}")
    print(f"{exact.group(2)}%  {wall:.1f} s  {command}", flush=True)
    return {"command": command, "held_out": int(exact.group(1)), "exact_copies_percent": exact.group(2),
            "wall_seconds": round(wall, 1),
            "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
            "training_line": threads.group(0) if threads else None,
            "load_average_before": [round(v, 2) for v in load],
            "load_average_after": [round(v, 2) for v in os.getloadavg()]}


def changed_files() -> list[str] | None:
    "The paths where the working tree differs from its commit (`git status --porcelain` lines); None: no git."
    try:
        return subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True,
                              check=True, timeout=20).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return None


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=RECORD)
    args = ap.parse_args(argv)
    first, resume = readme_commands()
    inner = first.replace(" --out runs/copy", " --inner-dropout --out runs/copy_inner")
    assert inner != first
    # the console script of this Python's environment, as an activated virtual environment would find it
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    assert shutil.which("annotated-transformer"), f"no annotated-transformer next to {sys.executable}"
    # the package of this checkout (a clean worktree of a commit runs that commit's code)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    commit, changed = git_commit(), changed_files()
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs["first"] = run(first, folder)
        runs["resumed"] = run(resume, folder)
        runs["inner_dropout"] = run(inner, folder)
    import torch
    record = {
        "what": "the README's copy-task commands (chapter 10), run as printed: exact greedy copies of the held-out "
                "sequences and the seconds of each command",
        "runs": runs,
        "command": " ".join(["python bench/readme_copy_task.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": commit,
        "changed_files": changed,
        "device": f"{cpu_name()} ({os.cpu_count()} logical CPUs)",
        "environment": {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS")},
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written to {args.out}")
    return record


if __name__ == "__main__":
    main()
