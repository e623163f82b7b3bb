"""Importing the peer libraries the benchmarks compare against (the ``bench`` extra)."""

import sys
import time
import types
import warnings

import numpy as np


def import_chemprop():
    """Import chemprop; return ``(module, note)``, or ``(None, reason)`` if unavailable.

    chemprop 2.3 imports ``cuik_molmaker`` (a C++ extension for its optional GPU featurizer,
    with no wheel on PyPI for every platform) at module level. The CPU path the benchmarks
    time never calls it, so when it is missing an empty module object satisfies the import,
    and the returned note says so.
    """
    try:
        import cuik_molmaker  # noqa: F401

        note = ""
    except ImportError:
        sys.modules["cuik_molmaker"] = types.ModuleType("cuik_molmaker")
        note = "cuik_molmaker absent: replaced by an empty module (unused on the CPU path)"
    try:
        import chemprop
        import lightning  # noqa: F401
    except ImportError as exc:
        return None, f"chemprop not importable ({exc})"
    return chemprop, note


def chemprop_fit_predict(X_train, y_train, X_test, seed):
    """``(test predictions, fit CPU seconds)`` of chemprop at its defaults: a D-MPNN with
    mean aggregation, 50 epochs, trained on 90 % of the training molecules and validated on
    the other 10 % each epoch; the last epoch's model predicts. Raises RuntimeError when
    chemprop cannot be imported."""
    import logging

    chemprop, note = import_chemprop()
    if chemprop is None:
        raise RuntimeError(note)
    import lightning.pytorch as pl
    from chemprop import data, featurizers, models, nn
    from sklearn.model_selection import train_test_split

    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="lightning")
    featurizer = featurizers.SimpleMoleculeMolGraphFeaturizer()
    X_train, y_train = np.asarray(X_train, dtype=object), np.asarray(y_train)

    def dataset(smiles, targets):
        return data.MoleculeDataset(
            [data.MoleculeDatapoint.from_smi(s, [t]) for s, t in zip(smiles, targets)],
            featurizer)

    cpu = time.process_time()
    fit_idx, val_idx = train_test_split(np.arange(len(X_train)), test_size=0.1,
                                        random_state=seed)
    fit_set = dataset(X_train[fit_idx], y_train[fit_idx])
    val_set = dataset(X_train[val_idx], y_train[val_idx])
    scaler = fit_set.normalize_targets()
    val_set.normalize_targets(scaler)
    pl.seed_everything(seed, verbose=False)
    ffn = nn.RegressionFFN(output_transform=nn.UnscaleTransform.from_standard_scaler(scaler))
    model = models.MPNN(nn.BondMessagePassing(), nn.MeanAggregation(), ffn)
    trainer = pl.Trainer(accelerator="cpu", devices=1, max_epochs=50, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    trainer.fit(model, data.build_dataloader(fit_set, num_workers=0, seed=seed),
                data.build_dataloader(val_set, num_workers=0, shuffle=False))
    cpu = time.process_time() - cpu
    test_set = dataset(X_test, np.zeros(len(X_test)))
    preds = trainer.predict(model, data.build_dataloader(test_set, num_workers=0,
                                                         shuffle=False))
    return np.concatenate([p.numpy() for p in preds]).ravel(), cpu
