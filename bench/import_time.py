"""How long `import annotated_transformer` takes, next to `import torch` that it needs, in fresh interpreters.

    python bench/import_time.py                 # 7 runs of each; writes bench/results/import_time.json
    python bench/import_time.py --runs 11 --out bench/results/import_time_laptop.json

Each measurement is a new `python -c` process timing its own import with `time.perf_counter` (interpreter start-up
not included), so that nothing is cached in the process; the operating system's file cache is warm after the first
run, which is why one run more than asked is made first and dropped. Reported: the median and the spread
(min, max) of each row. The rows:
* `import torch`: the floor;
* `import annotated_transformer`: the package (it imports torch and every module of the book);
* the package with matplotlib made unimportable (a user without the `[book]` extra), if the package imports;
* `import matplotlib.pyplot`: what the drawing of chapter 00 costs when it is imported;
* the console script `annotated-transformer --version`, start-up included (its wall time, from outside).
Not a test: the numbers depend on the machine and on what else runs on it (the JSON records both).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import cpu_name, git_commit  # noqa: E402  (bench/provenance.py, next to this script)

BLOCK_MATPLOTLIB = "import sys; sys.modules['matplotlib'] = None; sys.modules['matplotlib.pyplot'] = None; "
ROWS = {
    "import torch": "import torch",
    "import annotated_transformer": "import annotated_transformer",
    "import annotated_transformer (no matplotlib)": BLOCK_MATPLOTLIB + "import annotated_transformer",
    "import matplotlib.pyplot": "import matplotlib.pyplot",
}


def time_import(statement: str) -> tuple[float, float] | None:
    """(wall seconds, CPU seconds) the statement takes in a fresh interpreter; None if it fails there. The CPU time
    (user + system, of that process) depends less than the wall time on what else the machine runs."""
    code = ("import resource, time\n"
            "def cpu():\n    r = resource.getrusage(resource.RUSAGE_SELF)\n    return r.ru_utime + r.ru_stime\n"
            f"t, c = time.perf_counter(), cpu()\n{statement}\nprint(time.perf_counter() - t, cpu() - c)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if run.returncode != 0:
        return None
    wall, cpu_s = run.stdout.split()[-2:]
    return float(wall), float(cpu_s)


def time_command(command: list[str]) -> float | None:
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    return time.perf_counter() - start if run.returncode == 0 else None


def summary(samples: list) -> dict:
    "Median, min and max of the wall times (and of the CPU times, where measured)."
    if any(s is None for s in samples):
        return {"failed": True}
    walls = [s[0] if isinstance(s, tuple) else s for s in samples]
    out = {"median_s": round(statistics.median(walls), 3), "min_s": round(min(walls), 3),
           "max_s": round(max(walls), 3), "runs": len(samples)}
    if all(isinstance(s, tuple) for s in samples):
        cpus = [s[1] for s in samples]
        out.update(cpu_median_s=round(statistics.median(cpus), 3), cpu_min_s=round(min(cpus), 3),
                   cpu_max_s=round(max(cpus), 3))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="measurements per row (after one warm-up run)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "import_time.json")
    args = ap.parse_args(argv)
    if args.runs < 1:
        sys.exit(f"--runs must be at least 1, got {args.runs}")
    script = shutil.which("annotated-transformer", path=str(Path(sys.executable).parent)) \
        or shutil.which("annotated-transformer")
    rows: dict[str, dict] = {}
    for name, statement in ROWS.items():
        samples = [time_import(statement) for _ in range(args.runs + 1)][1:]
        rows[name] = {"statement": statement, **summary(samples)}
        print(f"{name:46} {rows[name]}")
    if script:
        samples = [time_command([script, "--version"]) for _ in range(args.runs + 1)][1:]
        rows["annotated-transformer --version"] = {"statement": f"{script} --version (wall time)",
                                                   **summary(samples)}
        print(f"{'annotated-transformer --version':46} {rows['annotated-transformer --version']}")
    torch_s = rows["import torch"].get("median_s")
    package_s = rows["import annotated_transformer"].get("median_s")
    torch_cpu = rows["import torch"].get("cpu_median_s")
    package_cpu = rows["import annotated_transformer"].get("cpu_median_s")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    record = {
        "what": "import time of the package against torch, fresh interpreters, median of runs",
        "rows": rows,
        "package_over_torch_s": round(package_s - torch_s, 3) if torch_s and package_s else None,
        "package_over_torch_cpu_s": round(package_cpu - torch_cpu, 3) if torch_cpu and package_cpu else None,
        "command": " ".join(["python bench/import_time.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": git_commit(),
        "device": f"{cpu_name()} ({os.cpu_count()} logical CPUs)",
        "load_average_at_end": [round(x, 2) for x in load] if load else None,
        "python": sys.version.split()[0],
        "torch": __import__("torch").__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"package over torch: {record['package_over_torch_s']} s wall, {record['package_over_torch_cpu_s']} s CPU; "
          f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
