"""Throughput of murcko_scaffolds against RDKit's MurckoScaffold, on small and long molecules.

Two inputs, each timed for both implementations in one process, interleaved, best of
``--repeats``: MOSES SMILES from the bundled test set (lead-like; 9-26 heavy atoms, mean
21, in the first 5,000), and a few molecules of about 1,000 heavy atoms (an alkane chain,
a benzene with a long tail, a polyethylene glycol, a polystyrene with a ring on every
second carbon; RDKit is run once on each of these). Both sides get the same parsed ``Mol``
objects, so parsing is not timed, and their scaffold SMILES are checked to be identical.

Run: ``.venv/bin/python benchmarks/bench_scaffold.py [--n-samples 5000] [--repeats 3]
[--long-atoms 1000]``.
"""

import argparse
import time

import numpy as np


def long_molecules(n_atoms):
    """Name -> SMILES of molecules with about ``n_atoms`` heavy atoms."""
    return {
        f"alkane C{n_atoms}": "C" * n_atoms,
        f"benzene + C{n_atoms - 6} tail": "c1ccccc1" + "C" * (n_atoms - 6),
        f"PEG, {n_atoms // 3} units": "O" + "CCO" * (n_atoms // 3),
        f"polystyrene, {n_atoms // 8} units": "C" + "CC(c1ccccc1)" * (n_atoms // 8) + "C",
    }


def rdkit_scaffolds(mols):
    """RDKit's own scaffold SMILES, as a user would call it."""
    from rdkit.Chem.Scaffolds import MurckoScaffold

    return [MurckoScaffold.MurckoScaffoldSmiles(mol=m) for m in mols]


def ours(mols):
    from sklearn_papers.chem import murcko_scaffolds

    return murcko_scaffolds(mols).tolist()


def best_times(runs, repeats):
    best, outputs = {name: np.inf for name in runs}, {}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            outputs[name] = run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best, outputs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--long-atoms", type=int, default=1000)
    args = parser.parse_args(argv)

    from rdkit import Chem

    from sklearn_papers.datasets import load_moses_smiles

    X, _ = load_moses_smiles(n_samples=args.n_samples, return_X_y=True)
    moses = [Chem.MolFromSmiles(s) for s in X]
    best, outputs = best_times({"rdkit": lambda: rdkit_scaffolds(moses),
                                "ours": lambda: ours(moses)}, args.repeats)
    assert outputs["ours"] == outputs["rdkit"], "scaffolds differ from RDKit's"
    n = len(moses)
    print(f"Murcko scaffolds, parsed Mol in, SMILES out; best of {args.repeats}; "
          "outputs identical to RDKit's MurckoScaffoldSmiles.")
    print(f"  {n} MOSES molecules: ours {n / best['ours']:8.0f} scaffolds/s, "
          f"RDKit {n / best['rdkit']:8.0f} scaffolds/s, ours / RDKit = "
          f"{best['rdkit'] / best['ours']:6.2f}x")
    for name, smiles in long_molecules(args.long_atoms).items():
        mol = [Chem.MolFromSmiles(smiles)]
        # RDKit takes seconds per long molecule: one run of it, best of repeats for ours
        best, outputs = best_times({"rdkit": lambda m=mol: rdkit_scaffolds(m)}, 1)
        best_ours, out_ours = best_times({"ours": lambda m=mol: ours(m)}, args.repeats)
        assert out_ours["ours"] == outputs["rdkit"], f"{name}: scaffold differs from RDKit's"
        print(f"  {name:28s} ({mol[0].GetNumAtoms()} atoms): ours {best_ours['ours'] * 1e3:8.2f}"
              f" ms, RDKit {best['rdkit'] * 1e3:9.1f} ms, ours / RDKit = "
              f"{best['rdkit'] / best_ours['ours']:8.0f}x")


if __name__ == "__main__":
    main()
