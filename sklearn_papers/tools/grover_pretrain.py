"""Regenerate the shipped GROVER checkpoints (Rong et al., 2020); data-parallel pretraining.

Two modes.

**Single process, through the estimator** (how ``moses-small`` was made): the checkpoint
in ``sklearn_papers/chem/_pretrained/moses-small/`` was written by::

    python -m sklearn_papers.tools.grover_pretrain \\
        --out sklearn_papers/chem/_pretrained/moses-small --n-samples 15000 --max-epochs 5

i.e. ``GroverFeaturizer(pretrained=None, ...).fit`` on the first ``--n-samples`` molecules
of the bundled MOSES test split (``load_moses_smiles``; see ``datasets/descr`` and the data
PROVENANCE for why MOSES and not GROVER's tryout file, which contains the ESOL and FreeSolv
molecules). ``config.json`` stores the training time (``training.seconds``,
featurization included) and the command line. ``--resume FOLDER --out NEW`` continues
from a checkpoint (architecture and vocabularies kept, Adam restarted) and appends a leg to
``training["legs"]``.

**Resumable and data-parallel** (``--state-dir``): the molecules are featurized once into
``STATE_DIR/graphs/`` (compact chunks, reused by every later leg), and training saves
its whole state (weights, Adam, epoch and step, losses, vocabularies, every leg) to
``STATE_DIR/state.pt`` at least every ``--save-every`` seconds, on ``SIGTERM`` and at the
end; a readable checkpoint of the latest weights is kept in ``STATE_DIR/checkpoint/``. Run
the same command again and it continues where the last leg stopped, drawing the batches
and hop counts the uninterrupted run would have drawn. When the last epoch is done, the
checkpoint is written to ``--out``, its ``config.json`` listing every leg (featurization
and training seconds, molecules per second, command, processes, device, machine load) in
``training["legs"]``. Data parallelism (:mod:`sklearn_papers.nn._grover._ddp`): each
process takes a disjoint shard of every global batch of ``--batch-size`` molecules and DDP
all-reduces the gradients, so ``W`` processes follow the loss curve of one process up to
float rounding. Processes come from ``torchrun`` (it sets ``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR``) or from ``--nproc N`` (``torch.multiprocessing.spawn`` on
this machine). ``--backend gloo`` (CPU) or ``nccl`` (GPUs, ``--device cuda``: process
``r`` uses ``cuda:LOCAL_RANK``); rank 0 writes the state, the checkpoint and the progress
log ``STATE_DIR/progress.log``. For instance, on a machine with 4 GPUs::

    torchrun --standalone --nproc-per-node 4 -m sklearn_papers.tools.grover_pretrain \\
        --state-dir grover_state --out moses-176k --n-samples 176074 \\
        --backend nccl --device cuda --batch-size 256

Torch runs on ``--threads`` threads per process (default 1).
"""

import argparse
import json
import os
import signal
import socket
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

#: Molecules per featurization chunk file.
CHUNK_SIZE = 2048
#: Version of the state and chunk layouts of ``--state-dir``.
STATE_VERSION = 1


def _positive(kind):
    """argparse type: a number of ``kind`` greater than 0 (the error names the value)."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {kind.__name__}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
        return value
    parse.__name__ = kind.__name__
    return parse


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="checkpoint folder to write")
    parser.add_argument("--n-samples", type=int, default=20000,
                        help="first rows of the MOSES test split (176074: all)")
    parser.add_argument("--hidden-size", type=int, default=64)
    parser.add_argument("--n-layers", type=int, default=1)
    parser.add_argument("--n-heads", type=int, default=2)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--max-epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=64,
                        help="molecules per step (the global batch, over all processes)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--min-freq", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2, help="featurization processes")
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    parser.add_argument("--resume", default=None,
                        help="(without --state-dir) checkpoint folder to continue "
                             "pretraining from (its architecture and vocabularies are kept; "
                             "config.json records every leg in training['legs']; Adam "
                             "restarts from a fresh state)")
    parser.add_argument("--state-dir", default=None,
                        help="resumable (and data-parallel) mode: folder of the featurized "
                             "molecules, the training state and the progress log; running "
                             "the same command again continues from it")
    parser.add_argument("--nproc", type=_positive(int), default=1,
                        help="processes to spawn on this machine (ignored under torchrun)")
    parser.add_argument("--backend", default="gloo", choices=["gloo", "nccl"],
                        help="torch.distributed backend: gloo (CPU) or nccl (GPUs)")
    parser.add_argument("--device", default="cpu",
                        help="cpu, or cuda (each process takes cuda:LOCAL_RANK)")
    parser.add_argument("--save-every", type=_positive(float), default=600.0,
                        help="seconds between two saves of the training state")
    parser.add_argument("--max-seconds", type=_positive(float), default=None,
                        help="end this leg (saving its state) after this many seconds of "
                             "training")
    parser.add_argument("--max-checkpoint-mb", type=_positive(float), default=None,
                        help="refuse a model whose weights take more MB than this")
    parser.add_argument("--featurize-only", action="store_true",
                        help="only featurize the molecules into --state-dir/graphs/ (a "
                             "later leg trains on them)")
    parser.add_argument("--verbose", type=int, default=1)
    return parser


def main(argv=None):
    """Pretrain GROVER on MOSES molecules and save the checkpoint.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments (``sys.argv[1:]`` when None).

    Returns
    -------
    folder : pathlib.Path or None
        The checkpoint folder written; None when a resumable leg stopped before the last
        epoch (its state is in ``--state-dir``).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    if args.state_dir is None:
        return _estimator_main(args, argv)
    from sklearn_papers.datasets import load_moses_smiles

    X, _ = load_moses_smiles(n_samples=args.n_samples, return_X_y=True)
    command = "python -m sklearn_papers.tools.grover_pretrain " + " ".join(argv)
    if args.featurize_only:
        featurize_to_disk(X, args.state_dir, n_jobs=args.n_jobs,
                          log=_logger(args.state_dir, args.verbose))
        return None
    return pretrain(X, args.state_dir, out=args.out, command=command,
                    **{k: getattr(args, k) for k in _PRETRAIN_ARGS})


def _estimator_main(args, argv):
    """Single-process pretraining through ``GroverFeaturizer.fit`` (no --state-dir)."""
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
        random_state=args.random_state, descriptors=False, fingerprint_bits=0, verbose=1,
    ).fit(X)
    seconds = time.perf_counter() - start
    folder = est.save(args.out)
    cfg_path = Path(folder) / "config.json"
    config = json.loads(cfg_path.read_text())
    leg = {
        "seconds": seconds,
        "dataset": f"load_moses_smiles(n_samples={args.n_samples}) (MOSES test split, first "
                   f"{args.n_samples} rows)",
        "command": "python -m sklearn_papers.tools.grover_pretrain " + " ".join(argv),
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


# -- featurized molecules on disk -----------------------------------------------------------
def _pack_chunk(data):
    """Arrays of one chunk of ``grover_graph`` outputs (binary columns bit-packed)."""
    atom_x = np.concatenate([g.atom_features for g, *_ in data]).astype(np.float32)
    bond_x = np.concatenate([g.bond_features for g, *_ in data]).astype(np.float32)
    arrays = {
        "n_atoms": np.array([g.n_atoms for g, *_ in data], dtype=np.int64),
        "n_edges": np.array([g.n_edges for g, *_ in data], dtype=np.int64),
        "edge_index": np.concatenate([g.edge_index for g, *_ in data], axis=1).astype(
            np.int32),
        "motifs": np.packbits(np.stack([m for *_, m in data]).astype(bool), axis=1),
        "n_motifs": np.array(len(data[0][3])),
    }
    for name, x in (("atom", atom_x), ("bond", bond_x)):
        binary = np.all((x == 0) | (x == 1), axis=0)
        arrays[f"{name}_binary"] = binary
        arrays[f"{name}_bits"] = np.packbits(x[:, binary].astype(bool), axis=1)
        arrays[f"{name}_real"] = x[:, ~binary]
    for name, pos in (("atom", 1), ("bond", 2)):
        table, codes = np.unique(np.array([w for d in data for w in d[pos]] or [""],
                                          dtype=str), return_inverse=True)
        n_labels = sum(len(d[pos]) for d in data)
        arrays[f"{name}_table"] = table
        arrays[f"{name}_codes"] = codes.reshape(-1)[:n_labels].astype(np.int32)
    return arrays


def _unpack_features(arrays, name):
    binary = arrays[f"{name}_binary"]
    x = np.empty((arrays[f"{name}_bits"].shape[0], binary.size), dtype=np.float32)
    x[:, binary] = np.unpackbits(arrays[f"{name}_bits"], axis=1, count=int(binary.sum()))
    x[:, ~binary] = arrays[f"{name}_real"]
    return x


def _chunk_path(folder, i):
    return Path(folder) / "graphs" / f"chunk_{i:05d}.npz"


def featurize_to_disk(smiles, folder, *, n_jobs=None, rank=0, world_size=1, log=None,
                      should_stop=None):
    """Featurize molecules for GROVER pretraining into ``folder/graphs/`` chunk files.

    Chunk ``i`` holds molecules ``[i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE)``; process
    ``rank`` writes the chunks ``rank, rank + world_size, ...`` that are not on disk yet
    (an interrupted featurization continues where it stopped).

    Parameters
    ----------
    smiles : sequence of str
    folder : path
    n_jobs : int, default=None
        joblib processes for each chunk.
    rank, world_size : int, default=0, 1
    log : callable, default=None
        ``log(message)`` after every chunk.
    should_stop : callable, default=None
        ``should_stop() -> bool``, checked before every chunk (e.g. a SIGTERM flag).

    Returns
    -------
    seconds : float
        Time spent featurizing in this call.
    """
    from sklearn_papers.chem._grover import _featurize
    from sklearn_papers.chem._validation import check_molecules

    start = time.perf_counter()
    (Path(folder) / "graphs").mkdir(parents=True, exist_ok=True)
    n_chunks = -(-len(smiles) // CHUNK_SIZE)
    record = {"started_utc": _utc(), "rank": rank, "world_size": world_size,
              "n_jobs": n_jobs, "nice": os.nice(0), "load_average_start": os.getloadavg()[0],
              "chunks": 0, "molecules": 0}
    legs_path = Path(folder) / "graphs" / f"legs_rank{rank}.json"
    legs = json.loads(legs_path.read_text()) if legs_path.exists() else []
    for i in range(rank, n_chunks, world_size):
        path = _chunk_path(folder, i)
        if path.exists():
            continue
        if should_stop is not None and should_stop():
            break
        part = list(smiles[i * CHUNK_SIZE:(i + 1) * CHUNK_SIZE])
        mols, _ = check_molecules(np.asarray(part, dtype=object))
        t = time.perf_counter()
        try:
            arrays = _pack_chunk(_featurize(list(mols), with_labels=True, n_jobs=n_jobs))
        except Exception:
            # ``timeout`` signals the whole process group: joblib's workers die with it
            if should_stop is not None and should_stop():
                break
            raise
        tmp = path.with_name(path.stem + f".tmp{os.getpid()}.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
        # what this call featurized so far, in graphs/legs_rank{rank}.json
        seconds = time.perf_counter() - start
        record.update(chunks=record["chunks"] + 1, molecules=record["molecules"] + len(part),
                      ended_utc=_utc(), seconds=seconds,
                      load_average_end=os.getloadavg()[0])
        record["molecules_per_s"] = record["molecules"] / max(seconds, 1e-9)
        legs_path.write_text(json.dumps(legs + [record], indent=1))
        if log is not None:
            log(f"featurized chunk {i + 1}/{n_chunks} ({len(part)} molecules, "
                f"{len(part) / (time.perf_counter() - t):.0f} molecules/s)")
    return time.perf_counter() - start


class PackedGroverData:
    """Featurized molecules of ``featurize_to_disk``, held compactly in memory.

    Indexing gives the items of :class:`~sklearn_papers.nn._grover.GroverDataset`
    (``(MolGraph, atom codes, bond codes, motifs, None)``), built on demand, once the
    vocabularies are set with :meth:`set_vocab`.

    Parameters
    ----------
    folder : path
        The ``--state-dir``.
    n_samples : int
        Number of molecules (chunk files ``0 .. ceil(n_samples / CHUNK_SIZE) - 1``).
    """

    def __init__(self, folder, n_samples):
        n_chunks = -(-int(n_samples) // CHUNK_SIZE)
        chunks = []
        for i in range(n_chunks):
            with np.load(_chunk_path(folder, i)) as z:
                chunks.append({k: z[k] for k in z.files})
        self.n_motifs = int(chunks[0]["n_motifs"])
        cat = (lambda key, axis=0: np.concatenate([c[key] for c in chunks], axis=axis))
        self.n_atoms, self.n_edges = cat("n_atoms"), cat("n_edges")
        if len(self.n_atoms) != int(n_samples):
            raise ValueError(f"{str(folder)!r} holds {len(self.n_atoms)} featurized "
                             f"molecules, not {n_samples}.")
        self.atom_start = np.concatenate([[0], np.cumsum(self.n_atoms)])
        self.edge_start = np.concatenate([[0], np.cumsum(self.n_edges)])
        self.edge_index = cat("edge_index", 1)
        self.motifs = cat("motifs")
        self.columns = {}
        for name in ("atom", "bond"):  # chunk by chunk: the float32 rows never all at once
            binary = np.logical_and.reduce(
                [np.all((x == 0) | (x == 1), axis=0)
                 for x in (_unpack_features(c, name) for c in chunks)])
            bits, real = [], []
            for c in chunks:
                x = _unpack_features(c, name)
                bits.append(np.packbits(x[:, binary].astype(bool), axis=1))
                real.append(x[:, ~binary])
            self.columns[name] = (binary, np.concatenate(bits), np.concatenate(real))
        # contextual labels: chunk-local tables -> one table of strings and codes into it
        self.label_table, self.label_codes = {}, {}
        for name in ("atom", "bond"):
            table = np.unique(np.concatenate([c[f"{name}_table"] for c in chunks]))
            self.label_table[name] = table
            self.label_codes[name] = np.concatenate(
                [np.searchsorted(table, c[f"{name}_table"])[c[f"{name}_codes"]]
                 for c in chunks]).astype(np.int32)
        self._vocab_codes = None

    def __len__(self):
        return len(self.n_atoms)

    def label_counts(self, name):
        """Counter of the contextual labels (``name``: ``"atom"`` or ``"bond"``)."""
        counts = np.bincount(self.label_codes[name], minlength=len(self.label_table[name]))
        return Counter({str(w): int(c) for w, c in zip(self.label_table[name], counts)
                        if c})

    def set_vocab(self, atom_vocab, bond_vocab):
        """Encode the labels with the vocabularies (``ContextVocab``)."""
        self._vocab_codes = {
            name: np.asarray(vocab.encode(list(self.label_table[name])),
                             dtype=np.int64)[self.label_codes[name]]
            for name, vocab in (("atom", atom_vocab), ("bond", bond_vocab))}

    def _rows(self, name, a, b):
        binary, bits, real = self.columns[name]
        x = np.empty((b - a, binary.size), dtype=np.float32)
        x[:, binary] = np.unpackbits(bits[a:b], axis=1, count=int(binary.sum()))
        x[:, ~binary] = real[a:b]
        return x

    def graph(self, i):
        """The ``MolGraph`` of molecule ``i``."""
        from sklearn_papers.chem.featurizers._graph import MolGraph

        a0, a1 = self.atom_start[i], self.atom_start[i + 1]
        e0, e1 = self.edge_start[i], self.edge_start[i + 1]
        edges = self.edge_index[:, e0:e1].astype(np.int64)
        return MolGraph(self._rows("atom", a0, a1), self._rows("bond", e0, e1), edges,
                        np.bincount(edges[1], minlength=a1 - a0).astype(np.int64))

    def __getitem__(self, i):
        if self._vocab_codes is None:
            raise RuntimeError("call set_vocab before reading training items")
        a0, a1 = self.atom_start[i], self.atom_start[i + 1]
        b0, b1 = self.edge_start[i] // 2, self.edge_start[i + 1] // 2
        motifs = np.unpackbits(self.motifs[i], count=self.n_motifs).astype(np.float32)
        return (self.graph(i), self._vocab_codes["atom"][a0:a1],
                self._vocab_codes["bond"][b0:b1], motifs, None)


# -- resumable, data-parallel pretraining ---------------------------------------------------
_PRETRAIN_ARGS = ("hidden_size", "n_layers", "n_heads", "depth", "max_epochs", "batch_size",
                  "lr", "min_freq", "n_jobs", "random_state", "threads", "nproc", "backend",
                  "device", "save_every", "max_seconds", "max_checkpoint_mb", "verbose")
_ARCH_ARGS = ("hidden_size", "n_layers", "n_heads", "depth")


def pretrain(smiles, state_dir, *, out=None, hidden_size=64, n_layers=1, n_heads=2,
             depth=3, max_epochs=6, batch_size=64, lr=1e-3, min_freq=5, n_jobs=None,
             random_state=0, threads=1, nproc=1, backend="gloo", device="cpu",
             save_every=600.0, max_seconds=None, max_checkpoint_mb=None, verbose=0,
             command=None):
    """Resumable, data-parallel GROVER pretraining (one leg).

    Under ``torchrun`` (``WORLD_SIZE`` in the environment) this process is one rank of the
    group; otherwise ``nproc`` processes are spawned here (``nproc=1``: this process
    alone). The training parameters of a state already in ``state_dir`` win over the
    ones given (a different value raises ``ValueError``), so a leg cannot silently continue
    another run.

    Parameters
    ----------
    smiles : sequence of str
        The molecules (the same in every leg).
    state_dir : path
        Folder of the featurized molecules, ``state.pt`` and ``progress.log``.
    out : path, default=None
        Where to write the finished checkpoint (format of ``load_grover_checkpoint``).
    hidden_size, n_layers, n_heads, depth, max_epochs, batch_size, lr, min_freq : \
            model and training parameters (``batch_size`` is the global batch)
    n_jobs : int, default=None
        Featurization processes (joblib).
    random_state : int, default=0
        Seeds the weights, the permutation of each epoch and the hop counts of each step.
    threads : int, default=1
        ``torch.set_num_threads`` of each process.
    nproc : int, default=1
    backend : {"gloo", "nccl"}, default="gloo"
    device : str, default="cpu"
        ``"cuda"``: each process uses ``cuda:LOCAL_RANK``.
    save_every, max_seconds : float
        Seconds between two saves; end of this leg (None: run to the last epoch).
    max_checkpoint_mb : float, default=None
        Refuse (``ValueError``, before any training) a model whose float32 weights take
        more megabytes (1e6 bytes) than this; the vocabularies, known only after
        featurization, size the heads.
    verbose : int, default=0
        Progress on stderr (rank 0).
    command : str, default=None
        Recorded in the leg.

    Returns
    -------
    folder : pathlib.Path or None
        ``out`` when the last epoch is done (and ``out`` given), else None.
    """
    cfg = {k: v for k, v in locals().items() if k in _PRETRAIN_ARGS}
    cfg["n_samples"] = len(smiles)
    cfg["command"] = command
    state_dir = Path(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    if "WORLD_SIZE" in os.environ:  # torchrun: this process is one rank
        return _worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), smiles,
                       state_dir, out, cfg, spawned=False)
    if nproc <= 1:
        return _worker(0, 1, smiles, state_dir, out, cfg, spawned=False)
    import torch.multiprocessing as mp

    log = _logger(state_dir, verbose)
    stop = {"flag": False}
    previous = _on_sigterm(lambda signum, frame: stop.update(flag=True))
    try:
        fz_seconds = featurize_to_disk(smiles, state_dir, n_jobs=n_jobs, log=log,
                                       should_stop=lambda: stop["flag"])
    finally:
        _on_sigterm(previous)
    if stop["flag"]:
        log("leg stopped during featurization")
        return None
    cfg["featurize_seconds"] = fz_seconds
    with socket.socket() as s:  # a free port for the process group
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    saved_env = {k: os.environ.get(k) for k in ("MASTER_ADDR", "MASTER_PORT")}
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(port)
    try:  # the children read the rendezvous address from the environment
        ctx = mp.spawn(_spawned, args=(nproc, list(smiles), str(state_dir), out, cfg),
                       nprocs=nproc, join=False)
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def forward_term(signum, frame):  # let the workers save and stop together
        for p in ctx.processes:
            if p.is_alive():
                os.kill(p.pid, signal.SIGTERM)

    previous = _on_sigterm(forward_term)
    try:
        while not ctx.join():
            pass
    finally:
        _on_sigterm(previous)
    return Path(out) if out is not None and _load_state(state_dir)["done"] else None


def _on_sigterm(handler):
    """Install a SIGTERM handler (main thread only; elsewhere nothing) and return the old."""
    import threading

    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)


def _spawned(rank, world_size, smiles, state_dir, out, cfg):
    _worker(rank, world_size, smiles, Path(state_dir), out, cfg, spawned=True)


def _logger(state_dir, verbose):
    def log(message):
        line = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC {message}"
        with open(Path(state_dir) / "progress.log", "a") as f:
            f.write(line + "\n")
        if verbose:
            print(line, file=sys.stderr, flush=True)
    return log


def _load_state(state_dir):
    import torch

    path = Path(state_dir) / "state.pt"
    return torch.load(path, map_location="cpu", weights_only=True) if path.exists() \
        else None


def _utc():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _worker(rank, world_size, smiles, state_dir, out, cfg, *, spawned):
    import torch

    from sklearn_papers.chem.featurizers._grover_features import (
        GROVER_MOTIFS,
        ContextVocab,
        grover_atom_features,
        grover_bond_features,
    )
    from sklearn_papers.nn._grover import GroverPretrainModel, GTransformer
    from sklearn_papers.nn._grover._ddp import train_pretrain_ddp
    from sklearn_papers.nn._skorch import torch_seeded

    torch.set_num_threads(int(cfg["threads"]))
    distributed = world_size > 1
    device = torch.device(cfg["device"])
    if device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
    log = _logger(state_dir, cfg["verbose"] and rank == 0) if rank == 0 else (lambda m: None)
    stop = {"flag": False}

    def on_term(signum, frame):
        stop["flag"] = True

    previous = _on_sigterm(on_term)
    wall = time.perf_counter()
    started = _utc()
    try:
        if distributed:
            import torch.distributed as dist
            from datetime import timedelta

            dist.init_process_group(cfg["backend"], rank=rank, world_size=world_size,
                                    timeout=timedelta(hours=6))
        fz_seconds = cfg.get("featurize_seconds", 0.0) if spawned else 0.0
        if not spawned:  # torchrun or one process: every rank featurizes its chunks
            fz_seconds = featurize_to_disk(smiles, state_dir, n_jobs=cfg["n_jobs"],
                                           rank=rank, world_size=world_size, log=log,
                                           should_stop=lambda: stop["flag"])
        stopped = torch.tensor([float(stop["flag"])], device=device)
        if distributed:  # (also waits for every rank's chunks)
            dist.all_reduce(stopped)
        if stopped.item() > 0:  # stopped while featurizing: the next leg continues
            log("leg stopped during featurization")
            return None
        data = PackedGroverData(state_dir, len(smiles))
        _check_cache(data, smiles)
        state = _load_state(state_dir)
        run_keys = _ARCH_ARGS + ("max_epochs", "batch_size", "lr", "min_freq",
                                 "random_state", "n_samples")
        if state is None:
            atom_vocab = ContextVocab(data.label_counts("atom"), min_freq=cfg["min_freq"])
            bond_vocab = ContextVocab(data.label_counts("bond"), min_freq=cfg["min_freq"])
            run = {k: cfg[k] for k in run_keys}
            legs = []
        else:
            run, legs = state["run"], list(state["legs"])
            changed = {k: (run[k], cfg[k]) for k in run_keys
                       if k != "max_epochs" and run[k] != cfg[k]}
            if changed:
                diff = ", ".join(f"{k}: saved {a!r}, given {b!r}"
                                 for k, (a, b) in changed.items())
                raise ValueError(f"{str(state_dir)!r} holds a run with other parameters "
                                 f"({diff}); use another --state-dir or the saved "
                                 "parameters.")
            run["max_epochs"] = cfg["max_epochs"]  # a run may be extended by more epochs
            atom_vocab = ContextVocab.from_itos(state["atom_vocab"])
            bond_vocab = ContextVocab.from_itos(state["bond_vocab"])
        data.set_vocab(atom_vocab, bond_vocab)
        seed = int(run["random_state"])
        with torch_seeded(seed):
            module = GroverPretrainModel(
                GTransformer(grover_atom_features().n_features,
                             grover_bond_features().n_features,
                             **{k: int(run[k]) for k in _ARCH_ARGS}),
                len(atom_vocab), len(bond_vocab), len(GROVER_MOTIFS))
        megabytes = sum(t.numel() * t.element_size()
                        for t in module.state_dict().values()) / 1e6
        if cfg.get("max_checkpoint_mb") is not None and megabytes > cfg["max_checkpoint_mb"]:
            raise ValueError(
                f"the model's weights take {megabytes:.2f} MB (vocabularies of "
                f"{len(atom_vocab)} atom and {len(bond_vocab)} bond labels), more than "
                f"max_checkpoint_mb={cfg['max_checkpoint_mb']}; lower hidden_size or "
                "n_layers, or raise min_freq.")
        leg = {"started_utc": started, "command": cfg.get("command"),
               "world_size": world_size, "backend": cfg["backend"] if distributed else None,
               "device": str(device if world_size == 1 else cfg["device"]),
               "torch_threads": int(cfg["threads"]), "featurize_seconds": fz_seconds,
               "from_epoch": 0 if state is None else int(state["epoch"]),
               "from_step": 0 if state is None else int(state["step"]),
               "host": socket.gethostname(), "nice": os.nice(0),
               "load_average_start": os.getloadavg()[0], "torch": str(torch.__version__)}
        log(f"leg {len(legs) + 1}: {len(data)} molecules, vocab {len(atom_vocab)} atom / "
            f"{len(bond_vocab)} bond labels, {megabytes:.2f} MB of weights, "
            f"{world_size} process(es), from epoch "
            f"{leg['from_epoch']} step {leg['from_step']}")
        last = {"t": time.perf_counter()}

        def progress(epoch, step, n_steps, loss):
            if time.perf_counter() - last["t"] >= 60 or step == n_steps:
                last["t"] = time.perf_counter()
                log(f"epoch {epoch + 1}/{run['max_epochs']} step {step}/{n_steps} "
                    f"loss {loss:.4f}")

        def save(snap):
            leg.update(ended_utc=_utc(), wall_seconds=time.perf_counter() - wall,
                       to_epoch=int(snap["epoch"]),
                       to_step=int(snap["step"]), seconds=float(snap["seconds"]),
                       molecules=int(snap["molecules"]),
                       molecules_per_s=float(snap["molecules"]) / max(snap["seconds"], 1e-9),
                       load_average_end=os.getloadavg()[0])
            full = dict(snap, version=STATE_VERSION, run=run, legs=legs + [dict(leg)],
                        featurization=_featurization_legs(state_dir),
                        atom_vocab=list(atom_vocab.itos), bond_vocab=list(bond_vocab.itos))
            tmp = state_dir / f"state.pt.tmp{os.getpid()}"
            torch.save(full, tmp)
            os.replace(tmp, state_dir / "state.pt")
            _write_checkpoint(state_dir / "checkpoint", full)
            if snap["done"] and out is not None:
                _write_checkpoint(out, full)
            log(f"saved state: epoch {snap['epoch']} step {snap['step']}, "
                f"{leg['molecules_per_s']:.1f} molecules/s in this leg"
                + (f"; finished, wrote {out}" if snap["done"] and out else ""))

        final = train_pretrain_ddp(
            module, data, max_epochs=int(run["max_epochs"]),
            batch_size=int(run["batch_size"]), lr=float(run["lr"]), seed=seed,
            device=device, rank=rank, world_size=world_size, state=state,
            save=save if rank == 0 else None, save_every=float(cfg["save_every"]),
            should_stop=lambda: stop["flag"], max_seconds=cfg["max_seconds"],
            progress=progress)
        log(f"leg ended after {time.perf_counter() - wall:.0f} s (epoch {final['epoch']} "
            f"step {final['step']}{', done' if final['done'] else ''})")
        return Path(out) if final["done"] and out is not None else None
    finally:
        _on_sigterm(previous)
        if distributed:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.destroy_process_group()


def _check_cache(data, smiles, n=8):
    """ValueError unless the first and last ``n`` cached molecules are what this version
    of the featurizer makes of ``smiles`` (the chunks of a run may come from several legs,
    each possibly with another version of the package)."""
    from sklearn_papers.chem._grover import _featurize
    from sklearn_papers.chem._validation import check_molecules

    idx = sorted(set(range(min(n, len(data)))) | set(range(max(len(data) - n, 0), len(data))))
    mols, _ = check_molecules(np.asarray([smiles[i] for i in idx], dtype=object))
    fresh = _featurize(list(mols), with_labels=True, n_jobs=1)
    atom_table, bond_table = data.label_table["atom"], data.label_table["bond"]
    for i, (graph, atoms, bonds, motifs) in zip(idx, fresh):
        cached = data.graph(i)
        a0, a1 = data.atom_start[i], data.atom_start[i + 1]
        b0, b1 = data.edge_start[i] // 2, data.edge_start[i + 1] // 2
        same = all(np.array_equal(getattr(cached, k), getattr(graph, k))
                   for k in ("atom_features", "bond_features", "edge_index", "degree")) \
            and list(atom_table[data.label_codes["atom"][a0:a1]]) == list(atoms) \
            and list(bond_table[data.label_codes["bond"][b0:b1]]) == list(bonds) \
            and np.array_equal(np.unpackbits(data.motifs[i], count=data.n_motifs), motifs)
        if not same:
            raise ValueError(
                f"the featurized molecule {i} ({smiles[i]!r}) on disk differs from what "
                "this version of the package makes of it: the chunks come from another "
                "featurizer or other molecules. Featurize into a new --state-dir.")


def _featurization_legs(state_dir):
    """The records of ``featurize_to_disk`` in ``state_dir/graphs/`` (every rank's)."""
    legs = []
    for path in sorted((Path(state_dir) / "graphs").glob("legs_rank*.json")):
        legs.extend(json.loads(path.read_text()))
    return sorted(legs, key=lambda g: (g["started_utc"], g["rank"]))


def _write_checkpoint(folder, state):
    """The package checkpoint (``load_grover_checkpoint`` format) of a training state."""
    import sklearn_papers
    from sklearn_papers.chem._grover_checkpoint import write_checkpoint

    run = state["run"]
    legs = state["legs"]
    params = {"batch_size": run["batch_size"], "depth": run["depth"], "device": "cpu",
              "dist_coef": 0.1, "dropout": 0.0, "errors": "raise",
              "hidden_size": run["hidden_size"], "lr": run["lr"],
              "max_epochs": run["max_epochs"], "min_freq": run["min_freq"],
              "n_heads": run["n_heads"], "n_jobs": None, "n_layers": run["n_layers"],
              "random_state": run["random_state"], "verbose": 0}
    training = {
        "n_molecules": int(run["n_samples"]),
        "dataset": f"load_moses_smiles(n_samples={run['n_samples']}) (MOSES test split, "
                   f"first {run['n_samples']} rows)",
        "epochs_done": int(state["epoch"]), "next_step": int(state["step"]),
        "finished": bool(state["done"]),
        "seconds_total": sum(float(g.get("seconds", 0.0)) for g in legs) + sum(
            float(g.get("seconds", 0.0)) for g in state.get("featurization", [])),
        "command": legs[-1].get("command") if legs else None,
        "torch": legs[-1].get("torch") if legs else None,
        "sklearn_papers": getattr(sklearn_papers, "__version__", "unknown"),
        "legs": legs,
        "featurization": state.get("featurization", []),
    }
    return write_checkpoint(folder, params=params, atom_vocab=state["atom_vocab"],
                            bond_vocab=state["bond_vocab"],
                            embedding_dim=2 * int(run["hidden_size"]),
                            loss_curve=state["loss_curve"], training=training,
                            state_dict=dict(state["model"]))


if __name__ == "__main__":
    main()
