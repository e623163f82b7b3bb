"""Regenerate the shipped GROVER checkpoint ``moses-small`` (Rong et al., 2020).

The checkpoint in ``sklearn_papers/chem/_pretrained/moses-small/`` was written by::

    python -m sklearn_papers.chem._grover_pretrain \\
        --out sklearn_papers/chem/_pretrained/moses-small

with the defaults below (the first ``--n-samples`` molecules of the bundled MOSES test
split, ``load_moses_smiles``; see ``datasets/descr`` and the data PROVENANCE for why MOSES
and not GROVER's tryout file, which contains the ESOL and FreeSolv molecules). The
training time on the machine that made it is stored in ``config.json``
(``training.seconds``, featurization included) together with the command line.
Torch runs on one thread (``torch.set_num_threads(1)``), which is the fastest setting for
this small model on a shared 2-core machine.

A long pretraining can run in legs: ``--resume FOLDER --out NEW`` continues from a
checkpoint (architecture and vocabularies kept, Adam restarted); ``config.json`` then
lists every leg (molecules, epochs, seconds, command) in ``training["legs"]`` and their
total time in ``training["seconds_total"]``.
"""

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv=None):
    """Pretrain ``GroverFeaturizer`` on MOSES molecules and save it.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments (``sys.argv[1:]`` when None).

    Returns
    -------
    folder : pathlib.Path
        The checkpoint folder written.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="checkpoint folder to write")
    parser.add_argument("--n-samples", type=int, default=20000)
    parser.add_argument("--hidden-size", type=int, default=64)
    parser.add_argument("--n-layers", type=int, default=1)
    parser.add_argument("--n-heads", type=int, default=2)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--max-epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--min-freq", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--resume", default=None,
                        help="checkpoint folder to continue pretraining from (its "
                             "architecture and vocabularies are kept; config.json records "
                             "every leg in training['legs']; Adam restarts from a fresh "
                             "state)")
    args = parser.parse_args(argv)

    import torch

    from sklearn_papers.chem._grover import GroverFeaturizer
    from sklearn_papers.datasets import load_moses_smiles

    torch.set_num_threads(args.threads)
    X, _ = load_moses_smiles(n_samples=args.n_samples, return_X_y=True)
    start = time.perf_counter()
    est = GroverFeaturizer(
        hidden_size=args.hidden_size, n_layers=args.n_layers, n_heads=args.n_heads,
        depth=args.depth, max_epochs=args.max_epochs, batch_size=args.batch_size,
        lr=args.lr, min_freq=args.min_freq, n_jobs=args.n_jobs, pretrained=args.resume,
        random_state=args.random_state, verbose=1,
    ).fit(X)
    seconds = time.perf_counter() - start
    folder = est.save(args.out)
    cfg_path = Path(folder) / "config.json"
    config = json.loads(cfg_path.read_text())
    leg = {
        "seconds": seconds,
        "dataset": f"load_moses_smiles(n_samples={args.n_samples}) (MOSES test split, first "
                   f"{args.n_samples} rows)",
        "command": "python -m sklearn_papers.chem._grover_pretrain " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "torch_threads": args.threads,
    }
    config["training"].update(leg)
    if config["training"].get("legs"):  # a resumed run: this leg is the last one
        config["training"]["legs"][-1].update(leg)
        config["training"]["seconds_total"] = sum(
            float(g.get("seconds", 0.0)) for g in config["training"]["legs"])
    cfg_path.write_text(json.dumps(config, indent=1))
    size = sum(p.stat().st_size for p in Path(folder).iterdir())
    print(f"wrote {folder} ({size / 1e6:.2f} MB) in {seconds:.0f} s; final loss "
          f"{est.loss_curve_[-1]:.4f}; curve {[round(v, 3) for v in est.loss_curve_]}")
    return Path(folder)


if __name__ == "__main__":
    main()
