"""The `annotated-transformer` console script's entry point (kept by hand, outside the package).

Importing `annotated_transformer` imports PyTorch and every chapter's module (their registrations run on import), which
takes seconds. `annotated-transformer --version` needs none of it, so this module answers it from the installation's
metadata and hands every other command to `annotated_transformer.cli.main`, unchanged.
"""
from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    "`annotated-transformer ARGS`: --version here, everything else by annotated_transformer.cli.main."
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:
        from importlib.metadata import PackageNotFoundError, version
        try:
            print(f"annotated-transformer {version('annotated-transformer')}")
        except PackageNotFoundError:
            print("annotated-transformer (not installed)")
        return 0
    from annotated_transformer.cli import main as cli_main
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
