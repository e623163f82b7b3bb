"""Sparse ECFP4 output: bytes and CPU per molecule against scikit-fingerprints' sparse output.

``CircularFingerprint(sparse=True)`` and scikit-fingerprints' ``ECFPFingerprint(sparse=True)``
fingerprint the same SMILES (radius 2, 2048 bits) in one process, chunk by chunk; their
CSR outputs are checked to hold the same bits (and equal the dense output on the first
chunk). The bytes of each output (data, indices and row pointers) and its CPU time
(``time.process_time``) are summed over the chunks and reported per million molecules,
beside the dense uint8 output's bytes (``n_bits`` per molecule).

Run: ``.venv/bin/python benchmarks/bench_ecfp_sparse.py [--smiles-file PATH]
[--n-samples N] [--chunk 100000]``. Without ``--smiles-file`` the bundled MOSES test split
(176,074 SMILES) is used. ``--smiles-file`` reads a one-column CSV of SMILES (gzip or not),
such as ``moses/dataset/data/train.csv.gz`` (1,584,663 SMILES) from the ``molsets`` wheel
(``pip download molsets --no-deps``, a zip). scikit-fingerprints is installed by ``make
bench``; without it only our figures are printed and nothing is recorded. The results go
to ``benchmarks/results/ecfp_sparse.json``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def read_smiles(path, n_samples):
    import pandas as pd

    frame = pd.read_csv(path, nrows=n_samples)
    return frame.iloc[:, 0].astype(str).to_numpy(dtype=object)


def nbytes(csr):
    return csr.data.nbytes + csr.indices.nbytes + csr.indptr.nbytes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smiles-file", default=None)
    parser.add_argument("--n-samples", type=int, default=None)
    parser.add_argument("--chunk", type=int, default=100_000)
    args = parser.parse_args(argv)

    from sklearn_papers.chem import CircularFingerprint

    if args.smiles_file:
        smiles = read_smiles(args.smiles_file, args.n_samples)
        source = f"{len(smiles)} SMILES of {Path(args.smiles_file).name}"
    else:
        from sklearn_papers.datasets import load_moses_smiles

        smiles, _ = load_moses_smiles(n_samples=args.n_samples, return_X_y=True)
        source = f"{len(smiles)} bundled MOSES test SMILES"
    try:
        from importlib.metadata import version

        from skfp.fingerprints import ECFPFingerprint

        skfp_version = version("scikit-fingerprints")
    except ImportError:
        skfp_version = None
        print("scikit-fingerprints is not installed (make bench installs it): our figures "
              "only, nothing recorded.")
    ours = CircularFingerprint(radius=2, n_bits=2048, sparse=True, verbose=0)
    peer = (None if skfp_version is None
            else ECFPFingerprint(fp_size=2048, radius=2, sparse=True))
    n = len(smiles)
    cpu = {"ours": 0.0, "peer": 0.0}
    size = {"ours": 0, "peer": 0}
    for start in range(0, n, args.chunk):
        chunk = smiles[start:start + args.chunk].tolist()
        t = time.process_time()
        mine = ours.transform(chunk)
        cpu["ours"] += time.process_time() - t
        size["ours"] += nbytes(mine)
        if start == 0:
            dense = CircularFingerprint(radius=2, n_bits=2048).transform(chunk)
            assert np.array_equal(mine.toarray(), dense), "sparse differs from dense"
        if peer is not None:
            t = time.process_time()
            theirs = peer.transform(chunk)
            cpu["peer"] += time.process_time() - t
            size["peer"] += nbytes(theirs)
            assert (mine != theirs.astype(mine.dtype)).nnz == 0, "bits differ from skfp"
        print(f"  {min(start + args.chunk, n)} / {n} molecules", flush=True)
    per_million = 1e6 / n
    dense_bytes = 2048 * 1e6
    print(f"ECFP4 (radius 2, 2048 bits), sparse CSR output, {source}, chunks of "
          f"{args.chunk}; bits identical.")
    print(f"  dense uint8 output:           {dense_bytes / 2**20:9.1f} MiB per million")
    print(f"  ours (CSR):                   {size['ours'] * per_million / 2**20:9.1f} MiB "
          f"per million, {cpu['ours'] * per_million:8.1f} CPU s per million")
    if peer is None:
        return
    print(f"  scikit-fingerprints (CSR):    {size['peer'] * per_million / 2**20:9.1f} MiB "
          f"per million, {cpu['peer'] * per_million:8.1f} CPU s per million")
    print(f"  ours / scikit-fingerprints:   bytes {size['ours'] / size['peer']:.2f}, "
          f"CPU {cpu['ours'] / cpu['peer']:.2f}")

    from _record import record

    record("ecfp_sparse", title="Sparse ECFP4 output: bytes and CPU time per million molecules",
           peer=f"scikit-fingerprints {skfp_version} ECFPFingerprint(sparse=True)",
           argv=argv,
           rows=[{"what": f"{source}, radius 2, 2048 bits, CSR output bytes per million "
                          "molecules (dense uint8: 2048 MB)",
                  "ours": size["ours"] * per_million / 1e6,
                  "peer": size["peer"] * per_million / 1e6, "unit": "MB",
                  "better": "lower"},
                 {"what": f"{source}, CPU time per million molecules (process time), "
                          "parsing included",
                  "ours": cpu["ours"] * per_million, "peer": cpu["peer"] * per_million,
                  "unit": "CPU s", "better": "lower"}],
           notes="Both outputs are checked to hold the same bits, chunk by chunk; bytes "
                 "count data, indices and row pointers.")


if __name__ == "__main__":
    main()
