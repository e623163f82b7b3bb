"""GROVER checkpoints: the folder format written by :meth:`GroverFeaturizer.save` and by
resumable pretraining, read and checked by :func:`load_grover_checkpoint`, and the
checkpoints shipped inside the package."""

import json
import os
import pickle
from pathlib import Path

__all__ = ["load_grover_checkpoint"]

#: Name of the format written by :meth:`GroverFeaturizer.save`, and its version.
FORMAT_NAME = "sklearn_papers.grover"
FORMAT_VERSION = 1
#: Checkpoints shipped inside the package (``sklearn_papers/chem/_pretrained/<name>/``).
PRETRAINED = ("moses-small", "moses-176k")
#: Architecture parameters, read from a checkpoint's config.
ARCH = ("hidden_size", "n_layers", "n_heads", "depth")


def _checkpoint_dir(pretrained):
    if isinstance(pretrained, str) and pretrained in PRETRAINED:
        from importlib.resources import files

        return Path(str(files("sklearn_papers.chem") / "_pretrained" / pretrained))
    return Path(pretrained)


def load_grover_checkpoint(pretrained, *, heads=True):
    """Read and check a GROVER checkpoint written by :meth:`GroverFeaturizer.save`.

    The format (version 1) is a folder with two files:

    * ``config.json``: ``{"format": "sklearn_papers.grover", "format_version": 1,
      "params": {estimator parameters}, "atom_vocab": [labels], "bond_vocab": [labels],
      "n_atom_features": 151, "n_bond_features": 14, "motifs": [85 names],
      "loss_curve": [...], "training": {...}}``; a checkpoint saved after continued
      pretraining lists every run in ``training["legs"]`` (molecules, seconds, epochs)
      and the whole loss curve;
    * ``weights.pt``: a plain ``state_dict`` (str -> tensor) of the pretraining model,
      written by ``torch.save`` and read with ``torch.load(weights_only=True)``, so loading
      never runs pickled code.

    The weights are checked against the config before any model sees them: every tensor
    the architecture in ``params`` (``hidden_size``, ``n_layers``, ``n_heads``) calls for
    must be present with its shape, no other tensor may be present, and (with ``heads``)
    the pretraining heads must fit the vocabularies (``atom_vocab``, ``bond_vocab``,
    ``motifs``).

    Parameters
    ----------
    pretrained : str or os.PathLike
        A shipped checkpoint name (``"moses-small"`` or ``"moses-176k"``) or a folder.
    heads : bool, default=True
        Also check the pretraining heads against the vocabularies. The fine-tuning
        estimators only load the encoder and pass False.

    Returns
    -------
    config : dict
        The parsed ``config.json``.
    state_dict : dict of str to torch.Tensor
        The weights.

    Raises
    ------
    ValueError
        If the folder or its files are missing, if ``config.json`` is not valid JSON or
        lacks a key, if the format or version is unknown, or if config and weights
        disagree (a parameter of the config that does not match the tensors, a missing,
        extra or misshapen tensor, a vocabulary of another size than its head); the
        message names the checkpoint folder or file and the parameter or tensor.

    Examples
    --------
    >>> from sklearn_papers.chem import load_grover_checkpoint
    >>> config, weights = load_grover_checkpoint("moses-small")
    >>> config["format_version"], len(config["motifs"])
    (1, 85)
    """
    import torch

    folder = _checkpoint_dir(pretrained)
    cfg_path, w_path = folder / "config.json", folder / "weights.pt"
    if not cfg_path.is_file() or not w_path.is_file():
        raise ValueError(
            f"pretrained={str(pretrained)!r} is neither a shipped checkpoint {PRETRAINED} nor "
            f"a folder holding config.json and weights.pt (looked in {str(folder)!r})."
        )
    try:
        config = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{str(cfg_path)!r} is not valid JSON ({exc}); the checkpoint is damaged. "
            "Save it again with GroverFeaturizer.save."
        ) from exc
    if not isinstance(config, dict):
        raise ValueError(
            f"{str(cfg_path)!r} holds a JSON {type(config).__name__}, not the object of a "
            f"{FORMAT_NAME} checkpoint."
        )
    if config.get("format") != FORMAT_NAME or config.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{str(cfg_path)!r} is not a {FORMAT_NAME} checkpoint of version "
            f"{FORMAT_VERSION} (format={config.get('format')!r}, "
            f"version={config.get('format_version')!r})."
        )
    missing = [k for k in ("params", "atom_vocab", "bond_vocab") if k not in config]
    if missing:
        raise ValueError(f"{str(cfg_path)!r} lacks the key(s) {missing} of a "
                         f"{FORMAT_NAME} checkpoint.")
    try:
        state = torch.load(w_path, map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, pickle.UnpicklingError) as exc:
        # torch's own text (chained below) may suggest weights_only=False: never here.
        raise ValueError(
            f"{str(w_path)!r} is not a readable torch state_dict "
            f"({type(exc).__name__}); the checkpoint is damaged. Save it again with "
            "GroverFeaturizer.save."
        ) from exc
    _check_checkpoint(config, state, folder, heads=heads)
    return config, state


def _shape(t):
    return tuple(int(d) for d in t.shape)


def _check_checkpoint(config, state, folder, *, heads):
    """ValueError naming ``folder`` and the parameter where config and weights disagree."""
    import torch

    from sklearn_papers.chem.featurizers._grover_features import (
        GROVER_MOTIFS,
        grover_atom_features,
        grover_bond_features,
    )
    from sklearn_papers.nn._grover import GroverPretrainModel, GTransformer

    where = f"GROVER checkpoint {str(folder)!r}"
    params = config["params"]
    if not isinstance(params, dict):
        raise ValueError(f"{where}: config.json's 'params' is a {type(params).__name__}, "
                         "not an object of estimator parameters.")
    for key in ARCH:
        value = params.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{where}: config.json's params[{key!r}] is {value!r}; it "
                             "must be a positive integer.")
    for key in ("atom_vocab", "bond_vocab"):
        vocab = config[key]
        if not isinstance(vocab, list) or len(vocab) < 2 or vocab[:2] != ["<pad>", "<other>"] \
                or not all(isinstance(w, str) for w in vocab):
            raise ValueError(f"{where}: config.json's {key!r} is not a list of labels "
                             "starting with '<pad>', '<other>'.")
    widths = {"n_atom_features": grover_atom_features().n_features,
              "n_bond_features": grover_bond_features().n_features}
    for key, width in widths.items():
        if key in config and config[key] != width:
            raise ValueError(f"{where}: config.json's {key} is {config[key]!r}, but this "
                             f"version of the package builds {width} GROVER features.")
    if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise ValueError(f"{where}: weights.pt does not hold a state_dict (a dict of "
                         "tensor names to tensors).")
    # What the tensors say about the architecture, against what config.json says.
    stream = state.get("encoder.node_blocks.0.mpn.weight")
    if stream is not None and stream.ndim == 3:
        layers = {int(k.split(".")[2]) for k in state if k.startswith("encoder.node_blocks.")}
        found = {"hidden_size": stream.shape[-1], "n_heads": stream.shape[0] // 3,
                 "n_layers": len(layers)}
        for key, value in found.items():
            if value != params[key]:
                raise ValueError(
                    f"{where}: config.json gives {key}={params[key]}, but the tensors in "
                    f"weights.pt are those of {key}={value} (e.g. "
                    f"'encoder.node_blocks.0.mpn.weight' has shape {_shape(stream)}). The "
                    "config and the weights come from different models.")
    if heads:
        sizes = {"atom_vocab": ("atom_heads.0.weight", len(config["atom_vocab"])),
                 "bond_vocab": ("bond_heads.0.weight", len(config["bond_vocab"])),
                 "motifs": ("motif_heads.0.weight",
                            len(config.get("motifs", GROVER_MOTIFS)))}
        for key, (name, size) in sizes.items():
            head = state.get(name)
            if head is not None and head.ndim == 2 and head.shape[0] != size:
                raise ValueError(
                    f"{where}: config.json's {key} has {size} labels, but the head "
                    f"{name!r} in weights.pt predicts {head.shape[0]} (shape "
                    f"{_shape(head)}). The vocabulary does not belong to these weights.")
    # Every tensor, by name and shape (the model is built on the meta device: no memory,
    # no random numbers drawn).
    with torch.device("meta"):
        encoder = GTransformer(widths["n_atom_features"], widths["n_bond_features"],
                               **{k: int(params[k]) for k in ARCH})
        if heads:
            model = GroverPretrainModel(encoder, len(config["atom_vocab"]),
                                        len(config["bond_vocab"]), len(GROVER_MOTIFS))
            expected = {k: _shape(v) for k, v in model.state_dict().items()}
        else:
            expected = {f"encoder.{k}": _shape(v) for k, v in encoder.state_dict().items()}
    given = {k: _shape(v) for k, v in state.items() if heads or k.startswith("encoder.")}
    missing = [k for k in expected if k not in given]
    if missing:
        raise ValueError(
            f"{where}: weights.pt lacks {len(missing)} tensor(s) that the parameters of "
            f"config.json call for, e.g. {missing[0]!r} of shape {expected[missing[0]]}. "
            "The file is incomplete or belongs to another model.")
    extra = [k for k in given if k not in expected]
    if extra:
        raise ValueError(
            f"{where}: weights.pt holds {len(extra)} tensor(s) that the parameters of "
            f"config.json do not call for, e.g. {extra[0]!r}. The config and the weights "
            "come from different models.")
    for name, shape in expected.items():
        if given[name] != shape:
            raise ValueError(
                f"{where}: tensor {name!r} in weights.pt has shape {given[name]}, but the "
                f"parameters of config.json call for {shape}.")


def write_checkpoint(folder, *, params, atom_vocab, bond_vocab, embedding_dim, loss_curve,
                     training, state_dict):
    """Write a checkpoint folder in the format :func:`load_grover_checkpoint` reads.

    The weights are written first, to a temporary file moved into place, then
    ``config.json``, so that an interrupted write never leaves a config beside weights it
    does not describe.

    Parameters
    ----------
    folder : str or os.PathLike
        Folder to create (or overwrite the two files in).
    params : dict
        Estimator parameters (plain JSON values), the architecture's included.
    atom_vocab, bond_vocab : list of str
        Context-label vocabularies of the pretraining heads.
    embedding_dim : int
        Width of the molecule embedding.
    loss_curve : list of float
        Training loss per epoch.
    training : dict
        How the weights were trained (plain JSON values).
    state_dict : dict of str to torch.Tensor
        The :class:`~sklearn_papers.nn._grover.GroverPretrainModel` weights.

    Returns
    -------
    folder : pathlib.Path
    """
    import torch

    from sklearn_papers.chem.featurizers._grover_features import GROVER_MOTIFS

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "params": params,
        "atom_vocab": list(atom_vocab),
        "bond_vocab": list(bond_vocab),
        "n_atom_features": 151,
        "n_bond_features": 14,
        "embedding_dim": int(embedding_dim),
        "motifs": list(GROVER_MOTIFS),
        "loss_curve": list(loss_curve),
        "training": training,
    }
    state = {k: v.detach().cpu().clone() for k, v in state_dict.items()}
    tmp = folder / f"weights.pt.tmp{os.getpid()}"
    torch.save(state, tmp)
    os.replace(tmp, folder / "weights.pt")
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    return folder
