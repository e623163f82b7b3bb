"""Every user-guide page's snippets run, and every page is in the guide's table of contents.

The ``.. code-block:: python`` blocks of a page run in order in one namespace, as a reader
running them one after the other would, in a temporary folder. Pages whose snippets need a
setup of their own (a CSV written beforehand, shorter training swapped in) are run by a
test of their family, listed in ``DEDICATED``; this module checks that each of those tests
exists and reads its page.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "user_guide"

DEDICATED = {
    "molecules_own_data.rst": "tests/chem/test_own_data_docs.py",
    "scaling_out.rst": "tests/chem/test_scaling_out_docs.py",
    "images.rst": "tests/vision/test_images_guide.py",
    "environments.rst": "tests/rl/test_environments_page.py",
}

# What a family's page tells a reader, as scikit-learn's user guide does.
SECTIONS = ("When to use", "Your own", "Parameters that matter", "Pitfalls", "See also")


def python_blocks(text):
    """The ``.. code-block:: python`` blocks of a reStructuredText page, dedented, in order."""
    blocks = []
    for match in re.finditer(r"^\.\. code-block:: python\n\n((?:(?: {4}.*)?\n)+)", text,
                             flags=re.M):
        lines = match.group(1).rstrip("\n").split("\n")
        blocks.append("\n".join(line[4:] for line in lines) + "\n")
    return blocks


def _pages():
    return sorted(p.name for p in GUIDE.glob("*.rst"))


def _shared_pages():
    return [name for name in _pages() if name not in DEDICATED]


def test_python_blocks_reads_indented_blocks_only():
    text = ("Intro\n\n.. code-block:: python\n\n    a = 1\n\n    b = a + 1\n\nText.\n\n"
            ".. code-block:: text\n\n    not python\n\n.. code-block:: python\n\n"
            "    c = 3\n")
    assert python_blocks(text) == ["a = 1\n\nb = a + 1\n", "c = 3\n"]


def test_every_page_is_in_the_user_guide_toctree():
    index = (ROOT / "docs" / "user_guide.rst").read_text(encoding="utf-8")
    toctree = index.split(":caption: User guide", 1)[1].split(".. toctree::", 1)[0]
    listed = set(re.findall(r"^   (user_guide/\S+)$", toctree, flags=re.M))
    missing = [n for n in _pages() if f"user_guide/{n[:-4]}" not in listed]
    assert not missing, f"add to the User guide toctree of docs/user_guide.rst: {missing}"


@pytest.mark.parametrize("page", sorted(DEDICATED))
def test_dedicated_page_tests_read_their_page(page):
    test = ROOT / DEDICATED[page]
    assert (GUIDE / page).exists(), page
    assert page in test.read_text(encoding="utf-8"), f"{test} does not read {page}"


@pytest.mark.parametrize("page", _shared_pages())
def test_page_has_the_sections_of_a_family_guide(page):
    text = (GUIDE / page).read_text(encoding="utf-8")
    headings = re.findall(r"^(.+)\n[-=~^]{3,}$", text, flags=re.M)
    for section in SECTIONS:
        assert any(h.startswith(section) for h in headings), f"{page}: no '{section}...'"
    assert len(python_blocks(text)) >= 3, page


@pytest.mark.parametrize("page", _shared_pages())
def test_page_snippets_run(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    for i, block in enumerate(python_blocks((GUIDE / page).read_text(encoding="utf-8"))):
        exec(compile(block, f"docs/user_guide/{page}[block {i}]", "exec"), namespace)
        assert capsys.readouterr().out.strip(), f"{page} block {i} prints nothing"
