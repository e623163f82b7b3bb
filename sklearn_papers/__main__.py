"""``python -m sklearn_papers reproduce ...`` is the same as ``sklearn-papers reproduce ...``."""

from sklearn_papers.reproduce._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
