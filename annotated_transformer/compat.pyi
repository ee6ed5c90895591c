# Type stubs of annotated_transformer.compat, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Reading the settings that earlier releases of the package saved: renamed fields, flat model settings, old copy-task keys, a switch that did not exist."""

from typing import Any, NoReturn

__all__ = ['RENAMED_MODEL_KEYS', 'FLAT_MODEL_KEYS', 'COPY_KEYS', 'SAVED_MODEL_FIELDS', 'ADDED_MODEL_FIELDS', 'OLD_MODEL_FLAGS', 'RENAMED_DATA_OPTIONS', 'refuse_renamed', 'upgrade_model_config', 'upgrade_train_config', 'upgrade_data_options']
RENAMED_MODEL_KEYS: dict[Any, Any]
FLAT_MODEL_KEYS: dict[Any, Any]
COPY_KEYS: dict[Any, Any]
SAVED_MODEL_FIELDS: frozenset[Any]
ADDED_MODEL_FIELDS: dict[Any, Any]
OLD_MODEL_FLAGS: dict[Any, Any]
RENAMED_DATA_OPTIONS: dict[Any, Any]

def refuse_renamed(old: str, new: str) -> NoReturn:
    """An old spelling typed today, in code or on a command line: refused in one line naming the new one (removed in 0.3.0, after 0.2.0 warned). Files saved by earlier releases are read with their old names, without a word: their loaders never call this.

    Parameters:
    - old: the old spelling as typed: '--layers', "TrainConfig key 'layers'"
    - new: what to write instead
    """

def upgrade_model_config(values: dict[Any, Any], source: str = 'model config', warn: bool = False) -> dict[Any, Any]:
    """The saved model settings with today's field names (and fields added since).

    Parameters:
    - values: a saved TransformerConfig, e.g. a checkpoint's model_config
    - source: names the file in an error
    - warn: True: the names were typed, not read from a file (refused)
    """

def upgrade_train_config(values: dict[Any, Any], source: str = 'config', warn: bool = False) -> dict[Any, Any]:
    """The saved run settings in today's layout: model settings under 'model'.

    Parameters:
    - values: saved run settings: a config.json or a checkpoint's train_config
    - source: names the file in an error
    - warn: True: the names were typed, not read from a file (refused)
    """

def upgrade_data_options(options: dict[Any, Any], source: str = 'data options', warn: bool = False) -> dict[Any, Any]:
    """The corpus builder's options with today's names.

    Parameters:
    - options: a run's data_options as given or saved
    - source: names the file or flag in an error
    - warn: True: the names were typed, not read from a file (refused)
    """
