"""What every benchmark records next to its numbers: the machine it ran on, and the commit it ran at."""
import platform
import subprocess
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
