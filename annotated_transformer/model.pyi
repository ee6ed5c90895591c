# Type stubs of annotated_transformer.model, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §3 (model architecture), §3.1 (encoder and decoder stacks), §3.4 (embeddings and softmax), §5.4 (residual dropout)."""

from annotated_transformer.multihead import MultiHeadAttention
from annotated_transformer.sublayers import PositionwiseFeedForward
from collections.abc import Callable
from os import PathLike
from pathlib import Path
from torch import Tensor, device
from torch.nn import Module, ModuleList
from typing import Any

__all__ = ['POSITIONAL_ENCODINGS', 'SELF_ATTENTIONS', 'POSITION_PARAMETERS', 'INITS', 'PRETRAINED_CONFIG', 'PRETRAINED_WEIGHTS', 'PRETRAINED_FORMATS', 'PRETRAINED_DTYPES', 'Embeddings', 'clones', 'EncoderLayer', 'DecoderLayer', 'Encoder', 'Decoder', 'Generator', 'EncoderDecoder', 'positional_kinds', 'positional_encoding', 'self_attention', 'TransformerConfig', 'init_weights', 'tie_embeddings', 'make_model_from_config', 'make_model', 'count_parameters', 'transformer_parameter_count', 'weights_misfit', 'write_pretrained', 'read_pretrained_config', 'read_pretrained_weights', 'read_pretrained']

class Embeddings(Module):
    """Learned token embeddings multiplied by $\\sqrt{d_{model}}$ (§3.4)."""
    d_model: Any
    lut: Any
    vocab: Any
    def __init__(self, vocab: int, d_model: int) -> None: ...
    def forward(self, x: Tensor) -> Tensor:
        """Parameters:
        - returns: ids (batch, seq) -> (batch, seq, d_model)
        """

def clones(module: Module, N: int) -> ModuleList:
    """`N` deep copies of `module`: the same structure, separate parameters."""

class EncoderLayer(Module):
    """One encoder layer (§3.1, Figure 1 left): self-attention, then feed-forward."""
    d_model: Any
    feed_forward: Any
    norm_first: Any
    self_attn: Any
    sublayer: Any
    def __init__(self, d_model: int, self_attn: MultiHeadAttention, feed_forward: Module, dropout: float, norm_first: bool = False) -> None: ...
    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor: ...

class DecoderLayer(Module):
    """One decoder layer (§3.1, Figure 1 right): self-, cross-attention, feed-forward."""
    d_model: Any
    feed_forward: Any
    norm_first: Any
    self_attn: Any
    src_attn: Any
    sublayer: Any
    def __init__(self, d_model: int, self_attn: MultiHeadAttention, src_attn: MultiHeadAttention, feed_forward: PositionwiseFeedForward, dropout: float, norm_first: bool = False) -> None: ...
    def forward(self, x: Tensor, memory: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None, cache: tuple[Any, ...] | None = None, is_causal: bool = False) -> Tensor: ...

class Encoder(Module):
    """A stack of `N` encoder layers (§3.1)."""
    layers: Any
    norm: Any
    def __init__(self, layer: EncoderLayer, N: int) -> None: ...
    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor: ...

class Decoder(Module):
    """A stack of `N` decoder layers (§3.1)."""
    layers: Any
    norm: Any
    def __init__(self, layer: DecoderLayer, N: int) -> None: ...
    def forward(self, x: Tensor, memory: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None, is_causal: bool = False) -> Tensor: ...

class Generator(Module):
    """Pre-softmax linear projection and log-softmax (§3.4)."""
    proj: Any
    def __init__(self, d_model: int, vocab: int) -> None: ...
    def forward(self, x: Tensor) -> Tensor:
        """Parameters:
        - returns: (batch, T, d_model) -> (batch, T, vocab)
        """

class EncoderDecoder(Module):
    """The Transformer of Figure 1, with Harvard's API."""
    decoder: Any
    encoder: Any
    generator: Any
    src_embed: Any
    tgt_embed: Any
    def __init__(self, encoder: Encoder, decoder: Decoder, src_embed: Module, tgt_embed: Module, generator: Generator) -> None: ...
    def encode(self, src: Tensor, src_mask: Tensor | None) -> Tensor:
        """Parameters:
        - returns: memory
        """
    def decode(self, memory: Tensor, src_mask: Tensor | None, tgt: Tensor, tgt_mask: Tensor | None = None) -> Tensor:
        """Parameters:
        - returns: decoder states
        """
    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None, tgt_mask: Tensor | None = None) -> Tensor:
        """Parameters:
        - returns: decoder states
        """
    def save_pretrained(self, folder: str | PathLike[Any]) -> Path:
        """Write config.json and model.safetensors into `folder` (see below)."""
    @classmethod
    def from_pretrained(cls, folder: str | PathLike[Any], device: str | device = 'cpu') -> EncoderDecoder: ...
POSITIONAL_ENCODINGS: dict[str, type[Module]]
SELF_ATTENTIONS: dict[str, type[MultiHeadAttention]]
POSITION_PARAMETERS: dict[str, Callable[..., Any]]
INITS: tuple[Any, ...]

def positional_kinds() -> tuple[str, ...]:
    """The values `TransformerConfig.positional` accepts: the paper's two, and later ones."""

def positional_encoding(config: TransformerConfig) -> Module:
    """The module that adds `config.positional`'s positions to the embeddings."""

def self_attention(config: TransformerConfig, attn: MultiHeadAttention) -> MultiHeadAttention:
    """The self-attention of `config.positional`: `attn` itself (the paper's), or a subclass of the same sizes that puts positions inside the attention."""

class TransformerConfig:
    """Hyperparameters of the Transformer; defaults: the paper's base model (Table 3)."""
    src_vocab: int
    tgt_vocab: int
    N: int
    d_model: int
    d_ff: int
    h: int
    dropout: float
    share_embeddings: bool
    norm_first: bool
    max_positions: int
    positional: str
    init: str
    d_k: int | None
    inner_dropout: bool
    def __post_init__(self) -> None: ...
    def __init__(self, src_vocab: int = 37000, tgt_vocab: int = 37000, N: int = 6, d_model: int = 512, d_ff: int = 2048, h: int = 8, dropout: float = 0.1, share_embeddings: bool = True, norm_first: bool = False, max_positions: int = 5000, positional: str = 'sinusoidal', init: str = 'default', d_k: int | None = None, inner_dropout: bool = False) -> None: ...
    @property
    def tied(self) -> tuple[str, ...]:
        """The $V \\times d_{model}$ matrices that share one weight (§3.4): all three, the target's two, or none."""
    @property
    def head_dims(self) -> tuple[int, int]:
        """$(d_k, d_v)$: each head's query/key width and value width; $d_k = d_v = d_{model}/h$ unless `d_k` is given."""
    def to_dict(self) -> dict[Any, Any]:
        """The configuration as a plain dict (what checkpoints store)."""
    @classmethod
    def from_dict(cls, values: dict[Any, Any], source: str = 'model config') -> TransformerConfig:
        """A validated configuration from a dict; unknown keys are refused."""

def init_weights(model: Module, rule: str = 'default') -> None:
    """Xavier uniform; $W^Q, W^K, W^V$ as one $3d \\times d$; embeddings $\\mathcal N(0, 1/d)$."""

def tie_embeddings(config: TransformerConfig, src_embed: Embeddings, tgt_embed: Embeddings, generator: Generator) -> None:
    """Share one weight matrix between the modules `config.tied` names (§3.4)."""

def make_model_from_config(config: TransformerConfig) -> EncoderDecoder:
    """Build (and initialize) the Transformer described by `config`."""

def make_model(src_vocab: int, tgt_vocab: int, N: int = 6, d_model: int = 512, d_ff: int = 2048, h: int = 8, dropout: float = 0.1, share_embeddings: bool = True, norm_first: bool = False, max_positions: int = 5000, positional: str = 'sinusoidal', init: str = 'default', d_k: int | None = None, inner_dropout: bool = False) -> EncoderDecoder:
    """Build the Transformer (fields of `TransformerConfig`); defaults: the base model."""

def count_parameters(model: Module) -> int:
    """Number of parameters, each shared parameter counted once."""

def transformer_parameter_count(config: TransformerConfig) -> int:
    """Parameter count of `make_model_from_config(config)` by formula (each shared parameter once)."""
PRETRAINED_CONFIG: str
PRETRAINED_WEIGHTS: str
PRETRAINED_FORMATS: tuple[Any, ...]
PRETRAINED_DTYPES: dict[Any, Any]

def weights_misfit(model: Module, state: dict[Any, Any], shown: int = 1, where: str = 'the checkpoint') -> str | None:
    """Why the state dict `state` does not load into `model`, in one line: the first keys whose shapes differ, that are missing, or that the model lacks (None: it fits).

    Parameters:
    - state: a state dict read from a file
    - shown: how many keys of each kind to name
    - where: what the file is called in the message
    """

def write_pretrained(model: Module, folder: str | PathLike[Any], config: dict[Any, Any] | None = None, **extra: object) -> Path:
    """Write `model`'s weights to model.safetensors (tied weights stored once), then config.json (last: a folder with a config.json is complete).

    Parameters:
    - config: the model's settings; default: model.config.to_dict()
    - returns: more entries of config.json (chapter 22: a Translator's format and corpus)
    """

def read_pretrained_config(folder: str | PathLike[Any]) -> dict[Any, Any]:
    """config.json of a folder written by save_pretrained, checked: one-line errors naming the file."""

def read_pretrained_weights(model: Module, folder: str | PathLike[Any]) -> Module:
    """Load the folder's model.safetensors into `model` (a tied matrix, stored once, fills every name it has); weights that do not fit: one line naming the key and both shapes."""

def read_pretrained(folder: str | PathLike[Any], device: str | device = 'cpu') -> EncoderDecoder:
    """`EncoderDecoder.from_pretrained`: the model that save_pretrained wrote into `folder`, in eval mode."""
