"""The built-docs checker finds broken internal links, anchors and images, and only those:
in every page as parsed, and in pages opened in a headless browser when one is installed."""

import importlib.util
import struct
import zlib
from pathlib import Path

import pytest


def _checker():
    path = Path(__file__).resolve().parents[1] / "docs" / "check_html.py"
    spec = importlib.util.spec_from_file_location("check_html", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png(width=2, height=1):
    """A valid RGB PNG of the given size (black pixels)."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\0" + b"\0\0\0" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


SVG = ('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4">'
       '<rect width="4" height="4"/></svg>')


def _site(root):
    """A small site: good and broken links, anchors and images."""
    (root / "sub").mkdir()
    (root / "img.png").write_bytes(_png())
    (root / "plot.svg").write_text(SVG)
    (root / "text.png").write_bytes(b"png")      # a PNG in name only
    (root / "empty.svg").write_bytes(b"")
    (root / "index.html").write_text(
        '<a href="sub/page.html#here">ok</a><a href="sub/page.html#gone">bad anchor</a>'
        '<a href="missing.html">bad file</a><img src="img.png"><img src="nope.png">'
        '<img src="plot.svg"><img src="text.png"><img src="empty.svg">'
        '<a href="https://example.org/x">external</a><a href="#top" id="top">self</a>'
        '<a href="sub/">folder</a>')
    (root / "sub" / "page.html").write_text('<h1 id="here">x</h1><a href="../index.html">up</a>')
    (root / "sub" / "index.html").write_text("<p>folder index</p>")


def test_broken_links_anchors_and_images_are_found(tmp_path):
    _site(tmp_path)
    problems = _checker().broken_links(tmp_path)
    found = sorted((str(p[0]), p[3], p[4]) for p in problems)
    assert found == [("index.html", "empty.svg", "empty image"),
                     ("index.html", "missing.html", "missing file"),
                     ("index.html", "nope.png", "missing file"),
                     ("index.html", "sub/page.html#gone", "missing anchor"),
                     ("index.html", "text.png", "not a PNG image")]
    assert _checker().main([str(tmp_path), "--no-browser"]) == 1


def test_a_clean_site_passes(tmp_path):
    (tmp_path / "index.html").write_text('<a href="index.html">self</a>')
    assert _checker().main([str(tmp_path), "--no-browser"]) == 0


def test_the_pages_a_reader_opens_are_one_of_each_kind_with_an_image_first(tmp_path):
    for folder in ("user_guide", "generated", "auto_examples"):
        (tmp_path / folder).mkdir()
    (tmp_path / "index.html").write_text("<p>home</p>")
    (tmp_path / "user_guide" / "a.html").write_text("<p>no image</p>")
    (tmp_path / "user_guide" / "b.html").write_text('<img src="../img.png">')
    (tmp_path / "generated" / "sklearn_papers.chem.X.html").write_text("<p>api</p>")
    (tmp_path / "auto_examples" / "index.html").write_text('<img src="../img.png">')
    (tmp_path / "auto_examples" / "plot_a.html").write_text("<p>not run</p>")
    pages = _checker().reader_pages(tmp_path)
    assert [(kind, str(path.relative_to(tmp_path))) for kind, path in pages] == [
        ("index", "index.html"), ("user guide", "user_guide/b.html"),
        ("API", "generated/sklearn_papers.chem.X.html"), ("gallery", "auto_examples/plot_a.html"),
        ("gallery index", "auto_examples/index.html")]


def test_a_headless_browser_shows_what_loads_and_finds_what_does_not(tmp_path):
    checker = _checker()
    browser = checker.find_browser()
    if browser is None:
        pytest.skip("no headless Chromium installed (apt-get install chromium-headless-shell)")
    _site(tmp_path)
    (tmp_path / "sub" / "page.html").write_text(
        '<h1 id="here">x</h1><img src="../img.png"><script>undefined_name();</script>')
    problems, n_images, n_links = checker.browser_problems(
        tmp_path, [("index", tmp_path / "index.html"),
                   ("page", tmp_path / "sub" / "page.html")], browser)
    # every problem is found at both widths
    assert len(problems) == 2 * len(set(problems))
    found = sorted({(str(p[0]), Path(p[3]).name, p[4].split(" (")[0].split(":")[0])
                    for p in problems})
    assert found == [("index.html", "empty.svg", "not shown by the browser"),
                     ("index.html", "missing.html", "missing file"),
                     ("index.html", "nope.png", "not shown by the browser"),
                     ("index.html", "page.html#gone", "missing anchor"),
                     ("index.html", "text.png", "not shown by the browser"),
                     ("sub/page.html", "-", "JavaScript exception")]
    assert n_images == 6 * len(checker.WIDTHS) and n_links >= 5


def test_a_page_wider_than_a_phone_is_found(tmp_path):
    checker = _checker()
    browser = checker.find_browser()
    if browser is None:
        pytest.skip("no headless Chromium installed (apt-get install chromium-headless-shell)")
    # as a phone-ready page (the theme's) says: lay out at the device's width
    meta = '<meta name="viewport" content="width=device-width, initial-scale=1">'
    (tmp_path / "wide.html").write_text(meta + '<div style="width: 900px">a wide table</div>')
    (tmp_path / "scrolls.html").write_text(
        meta + '<div style="overflow-x: auto"><div style="width: 900px">scrolls in its box'
        '</div></div>')
    problems, _, _ = checker.browser_problems(
        tmp_path, [("wide", tmp_path / "wide.html"), ("scrolls", tmp_path / "scrolls.html")],
        browser)
    assert [(str(p[0]), p[3]) for p in problems] == [("wide.html", "390 px")]
