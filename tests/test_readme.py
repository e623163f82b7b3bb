"""README: every Python snippet runs as written; every relative link points to a file."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _snippets():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_a_quick_start_per_family():
    text = "\n".join(_snippets())
    for family in ("chem", "decomposition", "contrastive", "continual", "vision", "rl",
                   "estimation", "metrics", "generative"):
        assert f"sklearn_papers.{family} import" in text, family


@pytest.mark.parametrize("index", range(len(_snippets())))
def test_readme_snippet_runs(index, capsys):
    import torch

    torch.set_num_threads(1)
    exec(compile(_snippets()[index], f"README.md snippet {index}", "exec"), {})
    assert capsys.readouterr().out.strip(), "every snippet prints its result"


def test_readme_links_resolve():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    missing = [link for link in links if not link.startswith("http")
               and not (README.parent / link).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_readme_links_every_user_guide_page():
    text = README.read_text(encoding="utf-8")
    pages = sorted((README.parent / "docs" / "user_guide").glob("*.rst"))
    assert pages
    missing = [p.name for p in pages if f"(docs/user_guide/{p.name})" not in text]
    assert not missing, f"link these user-guide pages from README: {missing}"
