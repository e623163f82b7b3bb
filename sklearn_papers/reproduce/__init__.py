"""The main job, ``sklearn-papers reproduce``: one module per paper, a registry, a report.

Run ``sklearn-papers reproduce --list`` for the experiments. Each writes a section of
``REPORT.md`` with our numbers beside the paper's.
"""

from sklearn_papers.reproduce._registry import Experiment, RunContext, Section, get_experiments

__all__ = ["Experiment", "RunContext", "Section", "get_experiments"]
