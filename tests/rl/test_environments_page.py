"""Every snippet of docs/user_guide/environments.rst runs and prints what the page shows."""

import doctest
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "environments.rst"


def test_every_snippet_of_the_environments_page_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the page writes a2c.joblib and rule.pt
    result = doctest.testfile(str(PAGE), module_relative=False, raise_on_error=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 30
    assert result.failed == 0, f"{result.failed} of the page's examples failed (see stdout)"
