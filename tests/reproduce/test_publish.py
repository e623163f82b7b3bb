"""``sklearn-papers publish``: a run's REPORT.json becomes one JSON record and one valid rst
page per experiment."""

import json

import pytest

from sklearn_papers.reproduce import Experiment, Result
from sklearn_papers.reproduce._cli import main
from sklearn_papers.reproduce._claims import Claim, judge
from sklearn_papers.reproduce._publish import markdown_to_rst, published_tables, render_page

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
    result = Result()
    verdict = judge(Claim("ours beats theirs", "accuracy", "paired interval"),
                    [0.9, 0.92, 0.91], [0.8, 0.79, 0.81])
    text = (BODY + "\n\n### Claims\n\n" + result.table([{"model": "ours", "accuracy": 0.91}])
            + "\n\n- Ours beats theirs: " + result.verdict(verdict, arms=("ours", "theirs")))
    return result.done(text, figures=[path])


def _register_fake_method(monkeypatch):
    """The results index groups pages by method: give the fake experiment one."""
    from sklearn_papers.reproduce import _methods

    fake = _methods.Method("fake", "Fake method", "F et al. 2024", "`Fake`",
                           "A fake method.", (), (("", "fake"),))
    monkeypatch.setattr(_methods, "METHODS", _methods.METHODS + (fake,))


def test_publish_writes_a_page_per_experiment_with_the_run_header(tmp_path, monkeypatch):
    from sklearn_papers.reproduce import _registry

    exp = Experiment(name="fake", title="Fake et al.: a claim", paper="F et al. 2024",
                     run=_run)
    monkeypatch.setattr(_registry, "get_experiments", lambda: {"fake": exp})
    _register_fake_method(monkeypatch)
    out, docs = tmp_path / "run", tmp_path / "docs"
    assert main(["reproduce", "--out", str(out), "--verbose", "0"]) == 0
    assert main(["publish", "--report", str(out), "--to", str(docs)]) == 0
    page = (docs / "fake.rst").read_text()
    _check_rst(page)
    assert "Full-protocol run" in page and "Commit: " in page and "Machine: " in page
    assert "load average" not in page and " UTC" not in page  # no run log
    assert (docs / "figures" / "plot.png").read_bytes() == b"\x89PNG"
    index = (docs / "index.rst").read_text()
    assert "   fake" in index and "ours beats theirs" in index
    # the page is rendered from the JSON beside it, which keeps the records
    record = json.loads((docs / "fake.json").read_text())
    assert render_page(record) == page
    verdict, = record["result"]["verdicts"]
    assert verdict["outcome"] == "holds" and verdict["arms"] == ["ours", "theirs"]
    assert verdict["rule"] == "paired interval" and verdict["section"] == "Claims"
    assert record["provenance"]["mode"] == "full" and record["provenance"]["cpu_seconds"] >= 0
    tables = published_tables(record)
    assert tables[-1] == {"section": "Claims", "columns": ["model", "accuracy"],
                          "rows": [["ours", "0.910"]]}
    assert main(["publish", "--report", str(out), "--to", str(docs), "--only", "nope"]) == 2


def test_published_pages_and_reports_carry_no_local_paths(tmp_path, monkeypatch):
    from sklearn_papers.reproduce import _registry

    exp = Experiment(name="fake", title="Fake et al.: a claim", paper="F et al. 2024",
                     run=_run)
    monkeypatch.setattr(_registry, "get_experiments", lambda: {"fake": exp})
    _register_fake_method(monkeypatch)
    out, docs = tmp_path / "runs" / "fake_full", tmp_path / "docs"
    assert main(["reproduce", "--out", str(out), "--verbose", "0"]) == 0
    report = (out / "REPORT.md").read_text()
    assert str(tmp_path) not in report
    assert "`sklearn-papers reproduce --out fake_full --verbose 0`" in report
    # a report whose command holds an absolute folder (written by hand, or by another tool)
    data = json.loads((out / "REPORT.json").read_text())
    data["provenance"]["command"] = data["provenance"]["command"].replace(
        "--out fake_full", f"--out {out} --records=~/records")
    (out / "REPORT.json").write_text(json.dumps(data), encoding="utf-8")
    assert main(["publish", "--report", str(out), "--to", str(docs)]) == 0
    page = (docs / "fake.rst").read_text()
    assert str(tmp_path) not in page and "~/records" not in page
    assert "``sklearn-papers reproduce --out fake_full --records=records --verbose 0``" in page


@pytest.mark.parametrize("words, expected", [
    (["reproduce", "--out", "/home/me/runs/sumo/"], "sklearn-papers reproduce --out sumo"),
    (["reproduce", "--out=../elsewhere/x", "--only", "sumo"],
     "sklearn-papers reproduce --out=x --only sumo"),
    (["publish", "--report", "C:\\Users\\me\\run", "--to", "docs/results"],
     "sklearn-papers publish --report run --to docs/results"),
    (["reproduce", "--out", "reports/full", "--records", "records"],
     "sklearn-papers reproduce --out reports/full --records records"),
])
def test_portable_command_cuts_local_paths_only(words, expected):
    from sklearn_papers.reproduce._report import portable_command

    assert portable_command(words) == expected


def test_committed_results_pages_carry_no_local_paths():
    import re
    import shlex
    from pathlib import Path

    from sklearn_papers.reproduce._report import portable_command

    pages = sorted((Path(__file__).parents[2] / "docs" / "results").glob("*.rst"))
    if not pages:
        pytest.skip("no docs/results in this checkout")
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for command in re.findall(r"``(sklearn-papers [^`]*)``", text):
            assert portable_command(shlex.split(command)[1:]) == command, (page.name, command)
        assert not re.search(r"(?<![\w.])/(home|Users|tmp|work|root|mnt)/", text), page.name
