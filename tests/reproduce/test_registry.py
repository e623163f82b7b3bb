"""The experiment names are the ones the papers' issues ask ``--only`` to accept."""

from sklearn_papers.reproduce import get_experiments

# Named by issues 2-9 (``supcon`` and ``group_norm`` are the two experiments of issue 6).
ISSUE_NAMES = {"disentanglement", "duvenaud", "gilmer", "grover", "group_norm", "lee_seung",
               "sumo", "supcon"}


def test_registry_lists_the_experiments_the_issues_name():
    # later issues add experiments of their own; these eight must stay under their names
    names = list(get_experiments())
    assert names == sorted(names)
    assert ISSUE_NAMES <= set(names)


def test_each_experiment_module_is_named_after_its_experiment():
    for name, exp in get_experiments().items():
        assert exp.run.__module__ == f"sklearn_papers.reproduce.{name}"
