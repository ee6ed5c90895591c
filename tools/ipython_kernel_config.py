# Installed by tools/install.sh into the virtualenv (.venv/etc/ipython/), where every IPython kernel started from
# it reads it. Notebooks are executed by kernels on this machine's loopback interface, so ipykernel's warning that
# "Kernel is running over TCP without encryption" (printed once per notebook) says nothing here; it is dropped,
# and every other message of the kernel still shows.
import logging


class _DropTcpNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "running over TCP without encryption" not in record.getMessage()


logging.getLogger("IPKernelApp").addFilter(_DropTcpNotice())

# Figures as PNGs at twice the resolution, shown at their normal size: sharp on high-DPI screens (the website, and
# notebooks run from this virtualenv).
c.InlineBackend.figure_formats = {"retina"}

# The Chinese edition's figures: while tools/build_site.sh executes the book it sets BOOK_FIGURES_DIR, and each
# figure a notebook shows is kept there (tools/figure_i18n.py draws it again with Chinese labels). Unset: nothing.
import os

if os.environ.get("BOOK_FIGURES_DIR"):
    import importlib.util

    _spec = importlib.util.spec_from_file_location("figure_i18n", os.environ["BOOK_FIGURES_HOOK"])
    _figure_i18n = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_figure_i18n)
    _figure_i18n.install_hook(os.environ["BOOK_FIGURES_DIR"])
