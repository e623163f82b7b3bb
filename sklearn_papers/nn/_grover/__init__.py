"""GROVER (Rong et al., 2020): the GTransformer encoder, pretraining heads and losses.

Tensor shapes: a batch of ``B`` molecules with ``N`` atoms and ``E`` directed edges in all
(see :func:`sklearn_papers.nn._graph.collate_graphs`); ``F`` atom features (151), ``F_b``
bond features (14); ``H`` the hidden size; ``h`` the number of attention heads. Directed
edges ``2k`` and ``2k + 1`` are the two directions of bond ``k``, so the reverse of edge
``e`` is ``e ^ 1`` and the bond-level rows are the even edges.

Everything is vectorised over the batch: message passing is one sparse-dense product per
hop for all streams (:class:`NeighbourOperator`, built once per batch and view); attention
runs on zero-padded ``(G, L, H)`` layouts with a mask (``scaled_dot_product_attention``),
one per group of molecules of similar length (:func:`attention_groups`: a few groups per
batch, never one per molecule), so one large molecule does not make the whole batch pay
``B x L^2``; the linear maps that read the sparse 151 atom features run once per atom.

In evaluation mode without autograd (``transform``, ``predict``) :class:`GTransformer`
takes an inference path over the same layers (:func:`._inference.encoder_inference`; the
same values up to float32 round-off, tested against the autograd path): compressed-row
aggregation matrices and attention groups built with numpy once per batch and view, short
attention groups by batched matrix products, and the large temporaries in a
:class:`~._inference.Scratch` that :func:`inference_scratch` shares among the batches of
one call (fresh large tensors cost page faults on CPU).

Modules, one job each:

* ``_ops``: segment means, positions, hop draws, neighbour pairs, the sparse-row product;
* ``_message_passing``: :class:`NeighbourOperator` and the dyMPN layer :class:`DyMPN`;
* ``_attention``: attention per molecule, padded by groups (:func:`attention_groups`);
* ``_encoder``: the transformer block and :class:`GTransformer`;
* ``_inference``: the encoder's inference path and its scratch buffers;
* ``_heads``: pretraining and fine-tuning models and their losses;
* ``_data``: :class:`GroverDataset`, :func:`collate_grover`, :func:`run_module`;
* ``_training``: the skorch net class, criteria and collate function of training;
* ``_ddp``: data-parallel pretraining across processes.
"""

from sklearn_papers.nn._grover._attention import (
    ATTENTION_FLOOR,
    ATTENTION_RATIO,
    attention_groups,
)
from sklearn_papers.nn._grover._data import GroverDataset, collate_grover, run_module
from sklearn_papers.nn._grover._encoder import GTransformer, MTBlock
from sklearn_papers.nn._grover._heads import (
    GroverFinetuneModel,
    GroverPretrainModel,
    SelfAttentivePooling,
    grover_finetune_loss,
    grover_pretrain_loss,
)
from sklearn_papers.nn._grover._inference import inference_scratch
from sklearn_papers.nn._grover._message_passing import DyMPN, NeighbourOperator
from sklearn_papers.nn._grover._ops import draw_hops, segment_mean
from sklearn_papers.nn._grover._training import (
    FinetuneCriterion,
    GroverNet,
    PretrainCriterion,
    collate_labelled,
)

__all__ = [
    "ATTENTION_FLOOR",
    "ATTENTION_RATIO",
    "DyMPN",
    "FinetuneCriterion",
    "GTransformer",
    "GroverDataset",
    "GroverFinetuneModel",
    "GroverNet",
    "GroverPretrainModel",
    "MTBlock",
    "NeighbourOperator",
    "PretrainCriterion",
    "SelfAttentivePooling",
    "attention_groups",
    "collate_grover",
    "collate_labelled",
    "draw_hops",
    "grover_finetune_loss",
    "grover_pretrain_loss",
    "inference_scratch",
    "run_module",
    "segment_mean",
]
