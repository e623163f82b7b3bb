"""Sphinx configuration: numpydoc API reference generated from the package, one page per paper."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))
sys.path.insert(0, os.path.abspath("."))

import sklearn_papers  # noqa: E402

project = "sklearn_papers"
author = "sklearn_papers developers"
copyright = "2026, sklearn_papers developers"
release = version = sklearn_papers.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.extlinks",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

# :doi:`10.1038/44565` and :arxiv:`1509.09292` in docstrings, as in scikit-learn.
extlinks = {
    "doi": ("https://doi.org/%s", "doi:%s"),
    "arxiv": ("https://arxiv.org/abs/%s", "arXiv:%s"),
}

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
templates_path = ["_templates"]
exclude_patterns = ["_build", "generated/*.examples", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5",
                    "auto_examples/*.json"]
html_theme = "alabaster"
nitpicky = False

intersphinx_mapping = {}  # no network at build time

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    # Examples train models; building the docs should not take an hour on 2 cores.
    "plot_gallery": os.environ.get("SKLEARN_PAPERS_DOCS_PLOT", "False"),
    "download_all_examples": False,
}


def _write_api_page(srcdir):
    """Generate docs/api.rst from the package's ``__all__`` lists (before autosummary runs)."""
    import importlib

    families = ["chem", "datasets", "decomposition", "contrastive", "estimation", "metrics"]
    lines = ["API reference", "=============", ""]
    for family in families:
        module = importlib.import_module(f"sklearn_papers.{family}")
        names = sorted(getattr(module, "__all__", []))
        if not names:
            continue
        title = f"``sklearn_papers.{family}``"
        lines += [title, "-" * len(title), "", f".. currentmodule:: sklearn_papers.{family}", "",
                  ".. autosummary::", "   :toctree: generated/", ""]
        lines += [f"   {name}" for name in names]
        lines.append("")
    path = os.path.join(srcdir, "api.rst")
    text = "\n".join(lines)
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as fh:
            fh.write(text)


_write_api_page(os.path.dirname(os.path.abspath(__file__)))
