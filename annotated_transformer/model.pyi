# Type stubs of annotated_transformer.model, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §3 (model architecture), §3.1 (encoder and decoder stacks), §3.4 (embeddings and softmax), §5.4 (residual dropout), Table 3 (model variations)."""

from annotated_transformer.decoding import KVCache
from annotated_transformer.multihead import MultiHeadAttention
from annotated_transformer.sublayers import PositionwiseFeedForward
from fastcore.basics import _clsmethod
from torch import Tensor
from torch.nn import Module, ModuleList
from typing import Any

__all__ = ['POSITIONAL_ENCODINGS', 'SELF_ATTENTIONS', 'POSITION_PARAMETERS', 'INITS', 'ARCHS', 'TO_OURS', 'Embeddings', 'EncoderLayer', 'DecoderLayer', 'clones', 'Encoder', 'Decoder', 'Generator', 'EncoderDecoder', 'positional_kinds', 'positional_encoding', 'self_attention', 'TransformerConfig', 'init_weights', 'tie_embeddings', 'make_model_from_config', 'make_model', 'count_parameters', 'register_arch', 'build_model', 'unwrap', 'model_config_dict', 'transformer_parameter_count']

class Embeddings(Module):
    """Learned token embeddings multiplied by $\\sqrt{d_{model}}$ (§3.4)."""
    d_model: Any
    lut: Any
    vocab: Any
    def __init__(self, vocab: int, d_model: int) -> None:
        """Parameters:
        - vocab: vocabulary size $V$
        - d_model: width of each embedding vector
        """
    def forward(self, x: Tensor) -> Tensor:
        """Parameters:
        - x: token ids (batch, seq)
        - returns: (batch, seq, d_model)
        """

class EncoderLayer(Module):
    """One encoder layer (§3.1, Figure 1 left): self-attention and feed-forward, each in an `AddAndNorm`."""
    d_model: Any
    feed_forward: Any
    norm_first: Any
    self_attn: Any
    sublayer: Any
    def __init__(self, d_model: int, self_attn: MultiHeadAttention, feed_forward: PositionwiseFeedForward, dropout: float, norm_first: bool = ...) -> None:
        """Parameters:
        - d_model: width of the residual stream
        - self_attn: multi-head self-attention (§3.2.2)
        - feed_forward: position-wise feed-forward network (§3.3)
        - dropout: dropout on each sublayer's output, before the residual sum (§5.4)
        - norm_first: False: the paper's post-norm; True: the pre-norm variant
        """
    def forward(self, x: Tensor, mask: Any = ...) -> Tensor:
        """Parameters:
        - x: (batch, src_len, d_model)
        - mask: bool, True = may attend: (batch, 1, src_len) for source padding
        - returns: (batch, src_len, d_model)
        """

class DecoderLayer(Module):
    """One decoder layer (§3.1, Figure 1 right): masked self-attention, cross-attention over `memory`, feed-forward."""
    d_model: Any
    feed_forward: Any
    norm_first: Any
    self_attn: Any
    src_attn: Any
    sublayer: Any
    def __init__(self, d_model: int, self_attn: MultiHeadAttention, src_attn: MultiHeadAttention, feed_forward: PositionwiseFeedForward, dropout: float, norm_first: bool = ...) -> None:
        """Parameters:
        - d_model: width of the residual stream
        - self_attn: masked multi-head self-attention over the target prefix
        - src_attn: encoder-decoder attention: queries from the decoder, keys/values from memory
        - feed_forward: position-wise feed-forward network (§3.3)
        - dropout: dropout on each sublayer's output, before the residual sum (§5.4)
        - norm_first: False: the paper's post-norm; True: the pre-norm variant
        """
    def forward(self, x: Tensor, memory: Tensor, src_mask: Any = ..., tgt_mask: Any = ..., cache: Any = ..., is_causal: bool = ...) -> Tensor:
        """Parameters:
        - x: (batch, tgt_len, d_model)
        - memory: encoder output (batch, src_len, d_model)
        - src_mask: (batch, 1, src_len): which source positions are real tokens
        - tgt_mask: (batch, tgt_len, tgt_len): padding and causal
        - cache: decoding (chapter 08): two KVCaches from `new_cache`, kept between steps
        - is_causal: True: the self-attention is causal without a mask tensor (and with tgt_mask)
        - returns: (batch, tgt_len, d_model)
        """
    def new_cache(self, capacity: int = ...) -> tuple[KVCache, KVCache]:
        """Empty caches for decoding: the self-attention keys/values of the prefix, and those of the memory (fixed)."""

def clones(module: Module, N: int) -> ModuleList:
    """`N` deep copies of `module`: the same structure, separate parameters.

    Parameters:
    - module: the module to copy
    - N: number of copies
    """

class Encoder(Module):
    """A stack of `N` encoder layers (§3.1); a final LayerNorm only in the pre-norm variant."""
    layers: Any
    norm: Any
    def __init__(self, layer: EncoderLayer, N: int) -> None:
        """Parameters:
        - layer: the layer to copy N times
        - N: number of layers (6 in the paper)
        """
    def forward(self, x: Tensor, mask: Any = ...) -> Tensor:
        """Parameters:
        - x: embedded source (batch, src_len, d_model)
        - mask: source padding mask (batch, 1, src_len)
        - returns: memory (batch, src_len, d_model)
        """

class Decoder(Module):
    """A stack of `N` decoder layers (§3.1); a final LayerNorm only in the pre-norm variant."""
    layers: Any
    norm: Any
    def __init__(self, layer: DecoderLayer, N: int) -> None:
        """Parameters:
        - layer: the layer to copy N times
        - N: number of layers (6 in the paper)
        """
    def forward(self, x: Tensor, memory: Tensor, src_mask: Any = ..., tgt_mask: Any = ..., is_causal: bool = ...) -> Tensor:
        """Parameters:
        - x: embedded target (batch, tgt_len, d_model)
        - memory: encoder output (batch, src_len, d_model)
        - src_mask: (batch, 1, src_len)
        - tgt_mask: (batch, tgt_len, tgt_len)
        - is_causal: True: causal self-attention, no mask tensor needed
        - returns: decoder states (batch, tgt_len, d_model)
        """

class Generator(Module):
    """Pre-softmax linear projection and log-softmax (§3.4): decoder states -> next-token log-probabilities."""
    proj: Any
    def __init__(self, d_model: int, vocab: int) -> None:
        """Parameters:
        - d_model: width of the decoder states
        - vocab: target vocabulary size
        """
    def forward(self, x: Tensor) -> Tensor:
        """Parameters:
        - x: (batch, tgt_len, d_model)
        - returns: (batch, tgt_len, vocab)
        """

class EncoderDecoder(Module):
    """The Transformer of Figure 1: embeddings, encoder, decoder and generator (Harvard's API)."""
    decoder: Any
    encoder: Any
    generator: Any
    src_embed: Any
    tgt_embed: Any
    def __init__(self, encoder: Encoder, decoder: Decoder, src_embed: Module, tgt_embed: Module, generator: Generator) -> None:
        """Parameters:
        - encoder: stack of encoder layers
        - decoder: stack of decoder layers
        - src_embed: source token ids -> (batch, src_len, d_model): embeddings + positions + dropout
        - tgt_embed: target token ids -> (batch, tgt_len, d_model)
        - generator: decoder states -> log-probabilities
        """
    def encode(self, src: Tensor, src_mask: Any) -> Tensor:
        """Parameters:
        - src: source token ids (batch, src_len)
        - src_mask: (batch, 1, src_len), True at real tokens
        - returns: memory (batch, src_len, d_model)
        """
    def decode(self, memory: Tensor, src_mask: Any, tgt: Tensor, tgt_mask: Any = ...) -> Tensor:
        """Parameters:
        - memory: encoder output (batch, src_len, d_model)
        - src_mask: (batch, 1, src_len)
        - tgt: target prefix token ids (batch, tgt_len)
        - tgt_mask: (batch, tgt_len, tgt_len): target padding and causal; None: causal_mask(tgt_len)
        - returns: decoder states (batch, tgt_len, d_model)
        """
    def forward(self, src: Tensor, tgt: Tensor, src_mask: Any, tgt_mask: Any = ...) -> Tensor:
        """Parameters:
        - src: (batch, src_len)
        - tgt: (batch, tgt_len)
        - src_mask: (batch, 1, src_len)
        - tgt_mask: (batch, tgt_len, tgt_len); None: causal
        - returns: decoder states (batch, tgt_len, d_model); apply `self.generator` for log-probabilities
        """
POSITIONAL_ENCODINGS: Any
SELF_ATTENTIONS: Any
POSITION_PARAMETERS: Any
INITS: tuple

def positional_kinds() -> Any:
    """The values `TransformerConfig.positional` accepts: the paper's two, and later ones."""

def positional_encoding(config) -> Module:
    """The module that adds `config.positional`'s positions to the embeddings."""

def self_attention(config, attn: MultiHeadAttention) -> MultiHeadAttention:
    """The self-attention of `config.positional`: `attn` itself (the paper's), or a subclass of the same sizes that puts positions inside the attention."""

class TransformerConfig:
    """Hyperparameters of the Transformer; the defaults are the paper's base model (Table 3)."""
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
    d_k: Any
    inner_dropout: bool
    def __post_init__(self) -> None: ...
    def __init__(self, src_vocab: int = ..., tgt_vocab: int = ..., N: int = ..., d_model: int = ..., d_ff: int = ..., h: int = ..., dropout: float = ..., share_embeddings: bool = ..., norm_first: bool = ..., max_positions: int = ..., positional: str = ..., init: str = ..., d_k: Any = ..., inner_dropout: bool = ...) -> None: ...
    @property
    def tied(self) -> Any:
        """The $V \\times d_{model}$ matrices that share one weight (§3.4): all three, the target's two, or none."""
    @property
    def head_dims(self) -> Any:
        """$(d_k, d_v)$: each head's query/key width and value width; $d_k = d_v = d_{model}/h$ unless `d_k` is given."""
    def to_dict(self) -> dict:
        """The configuration as a plain dict (what checkpoints store)."""
    from_dict: _clsmethod

def init_weights(model: Module, rule: str = ...) -> None:
    """Xavier uniform for every matrix; by default $W^Q, W^K, W^V$ of an attention count as one $3d \\times d$ and embeddings are $\\mathcal N(0, 1/d_{model})$.

    Parameters:
    - rule: one of INITS: "default" or "harvard" 
    """

def tie_embeddings(config: TransformerConfig, src_embed: Embeddings, tgt_embed: Embeddings, generator: Generator) -> None:
    """Share one weight matrix between the modules `config.tied` names (§3.4); say so when a vocabulary differs."""

def make_model_from_config(config: TransformerConfig) -> EncoderDecoder:
    """Build (and initialize) the Transformer described by `config`."""

def make_model(src_vocab: int, tgt_vocab: int, N: int = ..., d_model: int = ..., d_ff: int = ..., h: int = ..., dropout: float = ..., share_embeddings: bool = ..., norm_first: bool = ..., max_positions: int = ..., positional: str = ..., init: str = ..., d_k: Any = ..., inner_dropout: bool = ...) -> EncoderDecoder:
    """Build the Transformer; the defaults give the paper's base model.

    Parameters:
    - src_vocab: source vocabulary size
    - tgt_vocab: target vocabulary size
    - N: layers in the encoder and in the decoder
    - d_model: model width
    - d_ff: feed-forward inner width
    - h: attention heads
    - dropout: P_drop
    - share_embeddings: tie the embeddings and the pre-softmax projection (§3.4; see TransformerConfig)
    - norm_first: pre-norm variant instead of the paper's post-norm
    - max_positions: longest sequence the positional table covers
    - positional: "sinusoidal" (§3.5), "learned" (Table 3, row E), "rope" or "relative" (chapter 04)
    - init: initialization rule: "default" or "harvard"
    - d_k: width of each head's queries and keys (None: d_model / h; Table 3, row B)
    - inner_dropout: also drop attention weights and the FFN hidden layer (Harvard's, not the paper's)
    """

def count_parameters(model: Module) -> int:
    """Number of parameters, each shared parameter counted once."""
ARCHS: Any
TO_OURS: Any

def register_arch(name: str, build: Any, to_ours: Any = ...) -> None:
    """Make a model implementation available to `build_model` and `--arch NAME`.

    Parameters:
    - name: the value of --arch that selects it, and what checkpoints record
    - build: config -> model with `.config` (and `.arch = name`)
    - to_ours: optional: the same function in our layers
    """

def build_model(config: Any, arch: Any = ...) -> Module:
    """The model `config` describes, built by the architecture `arch` (default: ours, `make_model_from_config`).

    Parameters:
    - config: the model, or a checkpoint's model_config dict (arch included)
    - arch: a name in ARCHS; None: the dict's "arch", else ours
    """

def unwrap(model: Module) -> Module:
    """The plain model inside `torch.compile`, DDP and loss wrappers (a module with `wraps_model = True`)."""

def model_config_dict(model: Module) -> dict:
    """What a checkpoint stores to rebuild `model` with `build_model`: its TransformerConfig as a dict (+ arch if not ours)."""

def transformer_parameter_count(config: TransformerConfig) -> int:
    """Parameter count of `make_model_from_config(config)` by formula (each shared parameter once)."""
