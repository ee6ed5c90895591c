"""What the package declares about itself: its licences (the code's and the shipped corpus's), the lowest torch it
claims (the one CI tests), and that the library imports without its optional extras (matplotlib: `[book]`)."""
import configparser
import re
import subprocess
import sys
from pathlib import Path

from conftest import subprocess_env

REPO = Path(__file__).resolve().parents[1]
SETTINGS = configparser.ConfigParser(delimiters=["="])
SETTINGS.read(REPO / "settings.ini", encoding="utf-8")
CFG = SETTINGS["DEFAULT"]


def test_the_shipped_corpus_licence_is_declared():
    corpora = REPO / "annotated_transformer" / "corpora"
    shipped = sorted(p.name for p in corpora.iterdir() if p.suffix == ".txt")
    assert shipped == ["cmn-eng.txt"], f"a new data file ships: declare its licence in NOTICE and settings.ini ({shipped})"
    assert "CC-BY 2.0 FR" in (corpora / "README.md").read_text(encoding="utf-8")
    notice = (REPO / "NOTICE").read_text(encoding="utf-8")
    assert "annotated_transformer/corpora/cmn-eng.txt" in notice and "CC-BY 2.0 FR" in notice
    assert CFG["license_expression"] == "MIT AND LicenseRef-CC-BY-2.0-FR"
    setup = (REPO / "setup.py").read_text(encoding="utf-8")
    assert 'license_expression=cfg["license_expression"]' in setup and '"NOTICE"' in setup


def test_the_lowest_torch_claimed_is_the_one_ci_installs():
    tested = re.search(r"TORCH_SPEC:-torch==(\d+\.\d+)", (REPO / "tools" / "install.sh").read_text()).group(1)
    claimed = re.search(r"(?:^|\s)torch>=(\S+)", CFG["requirements"]).group(1)
    assert claimed == tested, f"settings.ini claims torch>={claimed}; CI tests torch {tested}"


def test_matplotlib_is_an_extra_the_dev_install_includes():
    requirements = CFG["requirements"].split()
    assert not any(r.startswith("matplotlib") for r in requirements)
    assert any(r.startswith("matplotlib") for r in CFG["book_requirements"].split())
    assert any(r.startswith("matplotlib") for r in CFG["dev_requirements"].split())  # tools/install.sh: .[dev]


def test_the_library_imports_without_matplotlib():
    code = ("import sys; sys.modules['matplotlib'] = None; sys.modules['matplotlib.pyplot'] = None\n"
            "import annotated_transformer as at\n"
            "print(at.make_model(11, 11, N=1, d_model=16, d_ff=32, h=2).__class__.__name__)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(),
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "EncoderDecoder", run.stderr[-2000:]


def test_the_version_is_the_newest_released_section_of_the_changelog():
    "__version__, settings.ini and CHANGELOG.md's newest dated section agree (Unreleased is for what comes next)."
    import annotated_transformer
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", changelog, flags=re.M)
    assert released and released[0][0] == annotated_transformer.__version__ == CFG["version"]


def test_the_wheel_check_installs_with_the_options_the_dev_install_uses():
    "uv reads no pip.conf: both scripts pass pip's wheel folders and constraints (the CPU torch) the same way."
    shared = (REPO / "tools" / "uv_options.sh").read_text()
    assert "find-links" in shared and "constraint" in shared
    for name in ("install.sh", "wheel_check.sh"):
        script = (REPO / "tools" / name).read_text()
        assert "source tools/uv_options.sh" in script, name
        uv_lines = [line for line in script.splitlines() if re.search(r"\buv\"? pip install", line)]
        assert uv_lines and all('"${UV_OPTIONS[@]}"' in line for line in uv_lines), (name, uv_lines)


# A runtime requirement without a lower bound, and why (settings.ini says it too).
UNBOUNDED = {"numpy": "only np.random is used; no one version is installable on Python 3.10 and tested on 3.11"}


def test_each_lower_bound_is_the_version_the_tests_run_on():
    """A range's bottom is a version CI tests: the dev extra pins each runtime requirement at its lower bound (pytest
    runs on it), and the wheel check installs the newest (its top). torch: the test above."""
    dev = dict(re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", r).groups()
               for r in CFG["dev_requirements"].split() if "==" in r)
    checked = []
    for requirement in CFG["requirements"].split():
        name, bound = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:>=(\S+))?", requirement).groups()
        if name == "torch":
            continue
        if name in UNBOUNDED:
            assert bound is None and name not in dev, f"{name} has a bound now: pin it in the dev extra"
            continue
        assert bound is not None, f"settings.ini's requirement {requirement!r} claims every version: give it the " \
                                  f"lower bound the dev extra pins"
        assert dev.get(name) == bound, (f"settings.ini claims {name}>={bound}, but the dev extra (what the tests run "
                                        f"on) pins {name}=={dev.get(name)}")
        checked.append(name)
    assert {"fastcore", "sacrebleu", "sentencepiece", "safetensors"} <= set(checked), checked
