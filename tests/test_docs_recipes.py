"""The recipe pages' snippets run; the getting-started page shows README snippets.

The ``.. code-block:: python`` blocks of each page run in order in one namespace, in a
temporary folder, as in tests/test_user_guide.py. The getting-started page shows the
README's snippets through ``.. readme-example::`` (docs/_ext/readme_examples.py); those run
in tests/test_readme.py, and here each directive must pick exactly one of them.
"""

import re
from pathlib import Path

import pytest

from tests.test_user_guide import python_blocks

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in (DOCS / "recipes").glob("*.rst"))


@pytest.mark.parametrize("page", PAGES)
def test_page_snippets_run(page, tmp_path, monkeypatch, capsys):
    import matplotlib
    import torch

    matplotlib.use("Agg")
    torch.set_num_threads(1)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    blocks = python_blocks((DOCS / page).read_text(encoding="utf-8"))
    assert blocks, page
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/{page}[block {i}]", "exec"), namespace)
    assert capsys.readouterr().out.strip(), f"{page} prints nothing"


def test_getting_started_shows_one_readme_snippet_per_family():
    import sys

    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from readme_examples import readme_snippets
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    text = (DOCS / "getting_started.rst").read_text(encoding="utf-8")
    wanted = re.findall(r"^\.\. readme-example:: (.+)$", text, flags=re.M)
    snippets = readme_snippets(ROOT / "README.md")
    for key in wanted:
        assert sum(key in s for s in snippets) == 1, key
    shown = "\n".join(wanted)
    for family in ("chem", "decomposition", "contrastive", "continual", "vision", "rl",
                   "estimation", "generative"):
        assert f"sklearn_papers.{family} import" in shown, family
