# Type stubs of annotated_transformer.torch_compare, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Our layers against PyTorch's own `nn.Transformer` with copied weights, the `torch` architecture for `--arch torch`, and the FLOPs of a training step."""

from annotated_transformer.model import EncoderDecoder, TransformerConfig
from torch import Tensor, nn
from torch.nn import Module
from typing import Any, Callable

__all__ = ['HARVARD_RENAMES', 'PEAK_FLOPS', 'paper_dropouts_only', 'TorchTransformer', 'torch_to_ours', 'ours_to_torch', 'HarvardLayerNorm', 'harvard_to_ours', 'training_flops', 'counted_step_flops']

def paper_dropouts_only(transformer: nn.Transformer) -> None:
    """Switch off nn.Transformer's dropout on the attention weights and the feed-forward hidden layer, keeping §5.4's on each sublayer's output (make_model's default)."""

class TorchTransformer(Module):
    """torch.nn.Transformer behind the `EncoderDecoder` API, with make_model's embeddings, positions, generator and init."""
    config: Any
    generator: Any
    h: Any
    src_embed: Any
    tgt_embed: Any
    transformer: Any
    arch: str
    def __init__(self, src_vocab: int, tgt_vocab: int, N: int = 6, d_model: int = 512, d_ff: int = 2048, h: int = 8, dropout: float = 0.1, share_embeddings: bool = True, norm_first: bool = False, max_positions: int = 5000, positional: str = 'sinusoidal', init: str = 'default', d_k: int | None = None, inner_dropout: bool = False) -> None:
        """Parameters:
        - tgt_vocab: vocabulary sizes
        - h: as make_model
        - share_embeddings: tie embeddings & pre-softmax weights (§3.4), as make_model
        - norm_first: pre-norm layers (then nn.Transformer's final norms are kept)
        - max_positions: rows of the positional table
        - positional: "sinusoidal" or "learned", as make_model
        - init: initialization rule, as make_model
        - d_k: must be d_model / h: nn.MultiheadAttention has no narrower keys
        - inner_dropout: keep nn.Transformer's attention and FFN-hidden dropout
        """
    def encode(self, src: Tensor, src_mask: Tensor | None) -> Tensor:
        """Parameters:
        - returns: (batch, src_len, d_model)
        """
    def decode(self, memory: Tensor, src_mask: Tensor | None, tgt: Tensor, tgt_mask: Tensor | None = None) -> Tensor:
        """Parameters:
        - returns: None: causal, as EncoderDecoder
        """
    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None, tgt_mask: Tensor | None = None) -> Tensor: ...

def torch_to_ours(model: TorchTransformer | nn.Transformer, into: EncoderDecoder | None = None) -> EncoderDecoder:
    """Our `EncoderDecoder` with the weights of a `TorchTransformer` (or a raw `nn.Transformer`'s stacks copied into `into`): the same function, with chapter 21's KV cache.

    Parameters:
    - model: trained with --arch torch, or PyTorch's own nn.Transformer
    - into: for a raw nn.Transformer only: our model of the same sizes, whose embeddings, positions and generator are kept and whose stacks are overwritten (in place)
    """

def ours_to_torch(model: EncoderDecoder, raw: bool = False) -> TorchTransformer | nn.Transformer:
    """The copy back: a `TorchTransformer` (or its `nn.Transformer`) computing what `model` computes.

    Parameters:
    - model: ours, built by make_model (sinusoidal or learned positions)
    - raw: True: only the nn.Transformer inside (without embeddings, generator)
    """

class HarvardLayerNorm(Module):
    """Harvard's LayerNorm: gain * (x - mean) / (std + eps) + bias over the last dimension, the standard deviation unbiased (n - 1) and eps outside it."""
    bias: Any
    eps: Any
    weight: Any
    config_describes: bool
    def __init__(self, features: int, eps: float = 1e-06) -> None: ...
    def forward(self, x: Tensor) -> Tensor: ...
HARVARD_RENAMES: tuple[Any, ...]

def harvard_to_ours(state_dict: dict[str, Tensor], h: int) -> EncoderDecoder:
    """Our EncoderDecoder holding the weights of Harvard's model: pre-norm, separate tables, HarvardLayerNorm in place of every LayerNorm; sizes from the weights. Every key is used, and each must fit, or it raises naming the key and both shapes.

    Parameters:
    - state_dict: Harvard's make_model(...).state_dict()
    - h: its number of heads: no weight's shape tells it
    """
PEAK_FLOPS: dict[Any, Any]

def training_flops(model_config: TransformerConfig | dict[Any, Any], src_tokens: int, tgt_tokens: int, src_len: float, tgt_len: float) -> float:
    """nanoGPT-style estimate of the FLOPs of one training step (forward + backward) of the encoder-decoder.

    Parameters:
    - model_config: the model (a checkpoint's model_config dict will do)
    - src_tokens: source tokens per step (S)
    - tgt_tokens: target tokens per step (T)
    - src_len: average source sentence length (s̄)
    - tgt_len: average target sentence length (t̄)
    """

def counted_step_flops(model: EncoderDecoder, batch, criterion: Callable[[Tensor, Tensor], Tensor]) -> int:
    """FLOPs of one forward + backward pass on `batch`, as PyTorch's FlopCounterMode counts them.

    Parameters:
    - model: our model (its attention is run through the explicit path for the count)
    - batch: a Batch (chapter 08)
    - criterion: e.g. LabelSmoothingLoss(..., reduction="sum")
    """
