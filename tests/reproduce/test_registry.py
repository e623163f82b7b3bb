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
    # a follow-up lives in its paper's module: ``<name>_followup`` in ``<name>.py``
    for name, exp in get_experiments().items():
        module = name[:-len("_followup")] if name.endswith("_followup") else name
        assert exp.run.__module__ == f"sklearn_papers.reproduce.{module}"
