"""The main job, ``sklearn-papers reproduce``: one module per paper, a registry, a report.

Run ``sklearn-papers reproduce --list`` for the experiments. Each returns a
:class:`Result` (tables, verdicts, figures), written as ``REPORT.json`` and rendered as a
section of ``REPORT.md`` with our numbers beside the paper's.
"""

from sklearn_papers.reproduce._registry import Experiment, RunContext, get_experiments
from sklearn_papers.reproduce._result import Result

__all__ = ["Experiment", "Result", "RunContext", "get_experiments"]
