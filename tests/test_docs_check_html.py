"""The built-docs checker finds broken internal links, anchors and images, and only those."""

import importlib.util
from pathlib import Path


def _checker():
    path = Path(__file__).resolve().parents[1] / "docs" / "check_html.py"
    spec = importlib.util.spec_from_file_location("check_html", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_broken_links_anchors_and_images_are_found(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "img.png").write_bytes(b"png")
    (tmp_path / "index.html").write_text(
        '<a href="sub/page.html#here">ok</a><a href="sub/page.html#gone">bad anchor</a>'
        '<a href="missing.html">bad file</a><img src="img.png"><img src="nope.png">'
        '<a href="https://example.org/x">external</a><a href="#top" id="top">self</a>'
        '<a href="sub/">folder</a>')
    (tmp_path / "sub" / "page.html").write_text('<h1 id="here">x</h1><a href="../index.html">up</a>')
    (tmp_path / "sub" / "index.html").write_text("<p>folder index</p>")
    problems = _checker().broken_links(tmp_path)
    found = sorted((str(p[0]), p[3], p[4]) for p in problems)
    assert found == [("index.html", "missing.html", "missing file"),
                     ("index.html", "nope.png", "missing file"),
                     ("index.html", "sub/page.html#gone", "missing anchor")]
    assert _checker().main([str(tmp_path)]) == 1


def test_a_clean_site_passes(tmp_path):
    (tmp_path / "index.html").write_text('<a href="index.html">self</a>')
    assert _checker().main([str(tmp_path)]) == 0
