# Type stubs of annotated_transformer.checks, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""The conventions every chapter's code follows: methods added with `@patch`, a small test after each piece, and one clear error for bad input."""

from torch import Tensor

__all__ = ['check_int', 'check_probability', 'check_token_ids', 'token_ids_checked', 'check_special_ids', 'one_line_warnings']

def check_int(value, what: str, minimum: int | None = None) -> int:
    """`value` as a Python int (any integer type, e.g. numpy's, is fine; bool and float are not), >= `minimum` if given.

    Parameters:
    - value: the argument to check
    - what: its name in the error message
    - minimum: the smallest value allowed (None: any)
    """

def check_probability(p, what: str = 'dropout') -> float:
    """`p` as a float, if it is a probability in [0, 1) (p = 1 would drop everything).

    Parameters:
    - p: the argument to check
    - what: its name in the error message
    """

def check_token_ids(tokens: Tensor, name: str = 'tokens', vocab: int | None = None, batch: bool = False) -> None:
    """Raise a TypeError/ValueError naming the problem unless `tokens` holds integer token ids (long or int32).

    Parameters:
    - tokens: token ids
    - name: what to call `tokens` in error messages
    - vocab: vocabulary size: valid ids are 0..vocab-1 (None: not checked)
    - batch: True: tokens must be 2-D (batch, seq) with seq >= 1
    """

def token_ids_checked():
    """Inside the block `check_token_ids` skips its vocabulary check, the one that reads the device: for callers that checked the same ids on the host."""

def check_special_ids(pad: int, bos: int, eos: int) -> None:
    """Raise a ValueError unless PAD, BOS and EOS are three different ids."""

def one_line_warnings(prog: str):
    """Show warnings as one line each, `PROG: warning: MESSAGE`, on stderr."""
