"""Resumable, data-parallel GROVER pretraining (tools/grover_pretrain, nn/_grover/_ddp)."""

import json
import shutil
from collections import Counter

import numpy as np
import pytest
import torch
from rdkit import Chem

from sklearn_papers.chem import GroverFeaturizer, load_grover_checkpoint
from sklearn_papers.chem._grover import _featurize
from sklearn_papers.tools.grover_pretrain import (
    PackedGroverData,
    _load_state,
    featurize_to_disk,
    main,
    pretrain,
)
from sklearn_papers.chem.featurizers._grover_features import GROVER_MOTIFS, ContextVocab
from sklearn_papers.nn._grover import (
    GroverDataset,
    GroverPretrainModel,
    GTransformer,
    collate_grover,
    grover_pretrain_loss,
)
from sklearn_papers.nn._grover._ddp import (
    _global_loss,
    global_batches,
    keep_every_parameter,
    pretrain_loss_terms,
)

MOLS = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "c1ccncc1", "CC(C)O", "C1CCCCC1",
        "OC(=O)c1ccccc1", "CCOC(=O)C", "Clc1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "CCCCCC",
        "CC(C)(C)c1ccc(O)cc1", "N#Cc1ccccc1", "O=C1CCCN1", "CSc1ccccc1", "FC(F)(F)c1ccccc1",
        "C", "CCOCC", "c1ccc2ccccc2c1", "NC(=O)N", "CC=CC", "OCCO", "c1ccsc1"]
#: A tiny model: 3 global batches of 8 per epoch, 2 epochs.
TINY = dict(hidden_size=8, n_layers=1, n_heads=1, depth=2, max_epochs=2, batch_size=8,
            min_freq=1, random_state=0, n_jobs=1)


@pytest.fixture(scope="module")
def graphs_dir(tmp_path_factory):
    """MOLS featurized once into a state folder (copied into each run's folder)."""
    folder = tmp_path_factory.mktemp("grover_graphs")
    featurize_to_disk(MOLS, folder, n_jobs=1)
    return folder


def _state_dir(tmp_path, graphs_dir, name):
    folder = tmp_path / name
    shutil.copytree(graphs_dir / "graphs", folder / "graphs")
    return folder


@pytest.fixture(scope="module")
def one_process(tmp_path_factory, graphs_dir):
    """An uninterrupted single-process run: (state, checkpoint folder)."""
    folder = _state_dir(tmp_path_factory.mktemp("one"), graphs_dir, "state")
    out = folder.parent / "out"
    assert pretrain(MOLS, folder, out=out, **TINY) == out
    return _load_state(folder), out


def test_packed_data_gives_the_graphs_and_labels_of_grover_graph(graphs_dir):
    data = PackedGroverData(graphs_dir, len(MOLS))
    direct = _featurize([Chem.MolFromSmiles(s) for s in MOLS], with_labels=True, n_jobs=1)
    atom_vocab = ContextVocab(Counter(w for d in direct for w in d[1]))
    bond_vocab = ContextVocab(Counter(w for d in direct for w in d[2]))
    assert data.label_counts("atom") == Counter(w for d in direct for w in d[1])
    data.set_vocab(atom_vocab, bond_vocab)
    for i, (graph, atoms, bonds, motifs) in enumerate(direct):
        g, a, b, m, y = data[i]
        np.testing.assert_array_equal(g.atom_features, graph.atom_features)
        np.testing.assert_array_equal(g.bond_features, graph.bond_features)
        np.testing.assert_array_equal(g.edge_index, graph.edge_index)
        np.testing.assert_array_equal(g.degree, graph.degree)
        np.testing.assert_array_equal(a, atom_vocab.encode(atoms))
        np.testing.assert_array_equal(b, bond_vocab.encode(bonds))
        np.testing.assert_array_equal(m, motifs)
        assert y is None


def test_loss_terms_over_global_counts_equal_grover_pretrain_loss(graphs_dir):
    data = PackedGroverData(graphs_dir, len(MOLS))
    atom_vocab = ContextVocab(data.label_counts("atom"))
    bond_vocab = ContextVocab(data.label_counts("bond"), min_freq=2)  # some <other>
    data.set_vocab(atom_vocab, bond_vocab)
    torch.manual_seed(0)
    model = GroverPretrainModel(GTransformer(151, 14, hidden_size=8, n_heads=1, depth=2),
                                len(atom_vocab), len(bond_vocab), len(GROVER_MOTIFS)).eval()
    items = [data[i] for i in range(10)]
    batch, labels = collate_grover(items)
    out = model(**batch.tensors)
    expected = grover_pretrain_loss(out, labels["atom"], labels["bond"], labels["motif"],
                                    0.1)[0]
    terms, counts = pretrain_loss_terms(out, labels["atom"], labels["bond"], labels["motif"],
                                        0.1)
    torch.testing.assert_close(_global_loss(terms, counts), expected)
    # two shards with the counts of the whole batch: the shards' losses add up to it
    halves = []
    for part in (items[:3], items[3:]):
        b, lab = collate_grover(part)
        halves.append(pretrain_loss_terms(model(**b.tensors), lab["atom"], lab["bond"],
                                          lab["motif"], 0.1))
    torch.testing.assert_close(halves[0][1] + halves[1][1], counts)
    torch.testing.assert_close(sum(_global_loss(t, counts) for t, _ in halves), expected)


def test_global_batches_shards_are_disjoint_and_cover_each_global_batch():
    one = global_batches(21, 8, seed=3, epoch=1)
    two = [global_batches(21, 8, seed=3, epoch=1, rank=r, world_size=2) for r in range(2)]
    assert [len(b) for b in one] == [8, 8, 5]
    for step, batch in enumerate(one):
        shards = [two[r][step] for r in range(2)]
        assert not set(shards[0]) & set(shards[1])
        assert sorted(np.concatenate(shards)) == sorted(batch)
    assert sorted(np.concatenate(one)) == list(range(21))
    other = global_batches(21, 8, seed=3, epoch=2)
    assert not all(np.array_equal(a, b) for a, b in zip(one, other))
    # a last global batch smaller than the number of processes is dropped
    assert [len(b) for b in global_batches(17, 8, seed=0, epoch=0, world_size=2)] == [4, 4]


def test_two_gloo_processes_follow_the_loss_curve_of_one(tmp_path, graphs_dir, one_process):
    state1, _ = one_process
    folder = _state_dir(tmp_path, graphs_dir, "state2")
    pretrain(MOLS, folder, nproc=2, backend="gloo", **TINY)
    state2 = _load_state(folder)
    assert state2["done"] and state2["legs"][-1]["world_size"] == 2
    np.testing.assert_allclose(np.concatenate(state2["step_losses"]),
                               np.concatenate(state1["step_losses"]), rtol=1e-5)
    assert state2["step_sizes"] == state1["step_sizes"] == [[8, 8, 8]] * 2
    for name, value in state1["model"].items():
        torch.testing.assert_close(state2["model"][name], value, rtol=1e-4, atol=1e-5)
    # and the loss went down
    assert state1["loss_curve"][-1] < state1["loss_curve"][0]


def test_resumed_legs_continue_the_uninterrupted_run(tmp_path, graphs_dir, one_process):
    state1, out1 = one_process
    folder = _state_dir(tmp_path, graphs_dir, "legs")
    out = tmp_path / "out"
    # leg 1 stops after its first step (max_seconds=0), leg 2 runs to the end
    assert pretrain(MOLS, folder, out=out, max_seconds=0, **TINY) is None
    partial = _load_state(folder)
    assert (partial["epoch"], partial["step"], partial["done"]) == (0, 1, False)
    config, _ = load_grover_checkpoint(folder / "checkpoint")  # readable mid-run
    assert config["training"]["finished"] is False
    assert pretrain(MOLS, folder, out=out, **TINY) == out
    state2 = _load_state(folder)
    np.testing.assert_allclose(np.concatenate(state2["step_losses"]),
                               np.concatenate(state1["step_losses"]), rtol=1e-6)
    for name, value in state1["model"].items():
        torch.testing.assert_close(state2["model"][name], value)
    legs = json.loads((out / "config.json").read_text())["training"]["legs"]
    assert [(g["from_epoch"], g["from_step"], g["to_epoch"], g["to_step"]) for g in legs] \
        == [(0, 0, 0, 1), (0, 1, 2, 0)]
    assert [g["molecules"] for g in legs] == [8, 40]
    assert all(g["seconds"] > 0 and g["molecules_per_s"] > 0 for g in legs)
    # the finished checkpoint is a GroverFeaturizer checkpoint with the run's weights
    embedding = dict(descriptors=False, fingerprint_bits=0)
    est = GroverFeaturizer(pretrained=out, **embedding).fit(MOLS[:2])
    ref = GroverFeaturizer(pretrained=out1, **embedding).fit(MOLS[:2])
    assert est.transform(MOLS).shape == (len(MOLS), 16)
    np.testing.assert_allclose(est.transform(MOLS), ref.transform(MOLS), rtol=1e-5,
                               atol=1e-6)


def test_a_leg_with_other_parameters_than_the_saved_run_raises(tmp_path, graphs_dir):
    folder = _state_dir(tmp_path, graphs_dir, "state")
    pretrain(MOLS, folder, max_seconds=0, **TINY)
    with pytest.raises(ValueError, match=r"hidden_size: saved 8, given 16"):
        pretrain(MOLS, folder, **dict(TINY, hidden_size=16))


def test_command_line_writes_a_loadable_checkpoint(tmp_path, monkeypatch):
    import sklearn_papers.datasets as datasets

    monkeypatch.setattr(datasets, "load_moses_smiles",
                        lambda n_samples, return_X_y: (np.array(MOLS[:n_samples]), None))
    out = tmp_path / "out"
    argv = ["--out", str(out), "--state-dir", str(tmp_path / "s"), "--n-samples", "12",
            "--hidden-size", "8", "--n-heads", "1", "--max-epochs", "1", "--batch-size",
            "6", "--min-freq", "1", "--n-jobs", "1", "--verbose", "0"]
    assert main(argv) == out
    config, _ = load_grover_checkpoint(out)
    training = config["training"]
    assert training["n_molecules"] == 12 and training["finished"]
    assert training["legs"][0]["command"].endswith(" ".join(argv))
    assert len(config["loss_curve"]) == 1


def test_a_model_larger_than_max_checkpoint_mb_is_refused_before_training(tmp_path,
                                                                          graphs_dir):
    folder = _state_dir(tmp_path, graphs_dir, "state")
    with pytest.raises(ValueError, match=r"weights take 0\.\d+ MB .* max_checkpoint_mb=0.01"):
        pretrain(MOLS, folder, max_checkpoint_mb=0.01, **TINY)
    assert not (folder / "state.pt").exists()


def test_a_shard_without_bonds_keeps_every_parameter_in_the_graph(graphs_dir):
    data = PackedGroverData(graphs_dir, len(MOLS))
    atom_vocab, bond_vocab = (ContextVocab(data.label_counts(k)) for k in ("atom", "bond"))
    data.set_vocab(atom_vocab, bond_vocab)
    torch.manual_seed(0)
    model = GroverPretrainModel(GTransformer(151, 14, hidden_size=8, n_heads=1, depth=2),
                                len(atom_vocab), len(bond_vocab), len(GROVER_MOTIFS))
    batch, labels = collate_grover([data[MOLS.index("C")]])  # methane: no bonds
    assert labels["bond"].numel() == 0
    terms, counts = pretrain_loss_terms(model(**batch.tensors), labels["atom"],
                                        labels["bond"], labels["motif"])
    loss = _global_loss(terms, counts)
    assert torch.isfinite(loss)
    kept = keep_every_parameter(loss, model)
    assert float(kept.detach()) == float(loss.detach())
    kept.backward()
    assert all(p.grad is not None for p in model.parameters())  # as DDP needs


def test_chunks_of_other_molecules_are_refused(tmp_path, graphs_dir):
    folder = _state_dir(tmp_path, graphs_dir, "state")
    with pytest.raises(ValueError, match=r"featurized molecule 0 \('c1ccsc1'\) on disk"):
        pretrain(MOLS[::-1], folder, **TINY)


@pytest.mark.parametrize("option", ["--nproc", "--save-every", "--max-seconds",
                                    "--max-checkpoint-mb"])
@pytest.mark.parametrize("value", ["0", "-1"])
def test_cli_rejects_non_positive_counts_naming_the_option(option, value, tmp_path, capsys):
    from sklearn_papers.tools.grover_pretrain import main

    with pytest.raises(SystemExit):
        main(["--state-dir", str(tmp_path), "--out", str(tmp_path / "o"), option, value])
    err = capsys.readouterr().err
    assert option in err and "must be > 0" in err
