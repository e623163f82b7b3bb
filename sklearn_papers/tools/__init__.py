"""Command-line tools that regenerate what the package ships; not estimators.

* :mod:`sklearn_papers.tools.grover_pretrain`: the GROVER checkpoints of
  ``sklearn_papers/chem/_pretrained/`` (``python -m sklearn_papers.tools.grover_pretrain``),
  single-process through the estimator or resumable and data-parallel.
"""
