"""``sklearn-papers publish``: a run's REPORT.md becomes one valid rst page per experiment."""

import pytest

from sklearn_papers.reproduce import Experiment, Section
from sklearn_papers.reproduce._cli import main
from sklearn_papers.reproduce._publish import markdown_to_rst

docutils_core = pytest.importorskip("docutils.core")

BODY = """Trained on `load_digits` (1/|P| weighting, `fit_`s) with IWAE_200 and tuning_accepted_.

### A table

| model | error (%) |
|---|---|
| ours, `norm='group'` | 1.2 ± 0.1 |
| a\\|b | |

- first point
- **bold** and *italic*

#### Smaller heading

```
Traceback: boom
```"""


def _check_rst(text):
    docutils_core.publish_doctree(text, settings_overrides={"halt_level": 2,
                                                           "report_level": 2})


def test_markdown_to_rst_is_valid_and_keeps_the_content():
    rst, images = markdown_to_rst(BODY + "\n\n![fig](fig.png)")
    _check_rst("Title\n=====\n\n" + rst)
    assert images == ["fig.png"]
    assert ".. list-table::" in rst and "1.2 ± 0.1" in rst and "a\\|b" in rst
    assert "``load_digits``" in rst and "1/\\|P\\|" in rst and "tuning_accepted\\_" in rst
    assert ".. image:: figures/fig.png" in rst and ".. code-block:: text" in rst


def _run(ctx):
    path = ctx.figure_path("plot.png")
    path.write_bytes(b"\x89PNG")
    return Section(markdown=BODY, figures=[path])


def test_publish_writes_a_page_per_experiment_with_the_run_header(tmp_path, monkeypatch):
    from sklearn_papers.reproduce import _registry

    exp = Experiment(name="fake", title="Fake et al.: a claim", paper="F et al. 2024",
                     run=_run)
    monkeypatch.setattr(_registry, "get_experiments", lambda: {"fake": exp})
    out, docs = tmp_path / "run", tmp_path / "docs"
    assert main(["reproduce", "--out", str(out), "--verbose", "0"]) == 0
    assert main(["publish", "--report", str(out), "--to", str(docs)]) == 0
    page = (docs / "fake.rst").read_text()
    _check_rst(page)
    assert "Full-protocol run" in page and "Commit: " in page and "Machine: " in page
    assert (docs / "figures" / "plot.png").read_bytes() == b"\x89PNG"
    assert "   fake" in (docs / "index.rst").read_text()
    assert main(["publish", "--report", str(out), "--to", str(docs), "--only", "nope"]) == 2
