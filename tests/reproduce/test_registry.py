"""Experiments are registered under stable names, the ones ``--only`` accepts."""

from sklearn_papers.reproduce import get_experiments

# Names the docs and scripts pass to ``--only``; renaming one would break them.
STABLE_NAMES = {"disentanglement", "duvenaud", "gilmer", "grover", "group_norm", "lee_seung",
               "sumo", "supcon"}


def test_registry_keeps_the_stable_experiment_names():
    # experiments may be added; these eight must stay under their names
    names = list(get_experiments())
    assert names == sorted(names)
    assert STABLE_NAMES <= set(names)


def test_each_experiment_module_is_named_after_its_experiment():
    # a follow-up lives in its paper's module (``<name>_followup`` in ``<name>.py``) or in
    # a module of its own, ``<name>_followup.py``
    for name, exp in get_experiments().items():
        paper = name[:-len("_followup")] if name.endswith("_followup") else name
        modules = {f"sklearn_papers.reproduce.{m}" for m in (paper, name)}
        assert exp.run.__module__ in modules, (name, exp.run.__module__)


def test_experiments_declare_their_claims_and_protocol():
    from sklearn_papers.reproduce import get_experiments
    from sklearn_papers.reproduce._claims import Claim
    from sklearn_papers.reproduce._common import Protocol

    declared = ["continual", "continual_followup", "deepsim", "deepsim_followup",
                "disentanglement", "grover", "grover_followup", "lee_seung", "lpg",
                "lpg_followup", "lpg_stock", "sumo", "sumo_followup", "supcon",
                "supcon_followup"]
    experiments = get_experiments()
    for name in declared:
        exp = experiments[name]
        assert exp.claims and all(isinstance(c, Claim) and c.key == key
                                  for key, c in exp.claims.items()), name
        assert isinstance(exp.protocol, Protocol), name
        assert exp.protocol.settings(True).keys() == exp.protocol.settings(False).keys()
