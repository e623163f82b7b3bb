"""Check built HTML docs as a reader meets them: every internal link and image resolves.

Run after the build (``make docs`` does)::

    python docs/check_html.py docs/_build/html

Parses every ``.html`` file under the folder with the standard library's HTML parser and
checks each ``href`` and ``src`` that points inside the site: the target file exists and,
for a ``#fragment``, the target page has an element with that ``id`` (or an ``<a name>``).
External links (``http:``, ``https:``, ``mailto:``) are not fetched. Exits 1 listing every
broken link or image, 0 when there is none.
"""

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) and not (tag == "link" and attrs.get("rel") == "canonical"):
                self.links.append((tag, key, attrs[key]))


def _parse(path, cache):
    if path not in cache:
        page = _Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = page
    return cache[path]


def broken_links(root):
    """``[(page, tag, attribute, target, reason)]`` for every internal link or image of the
    HTML files under ``root`` that does not resolve."""
    root = Path(root).resolve()
    cache, problems = {}, []
    for page_path in sorted(root.rglob("*.html")):
        page = _parse(page_path, cache)
        for tag, key, target in page.links:
            parts = urlsplit(target)
            if parts.scheme or target.startswith("//") or target.startswith("javascript:"):
                continue
            dest = page_path if not parts.path else (page_path.parent / unquote(parts.path))
            dest = dest.resolve()
            if dest.is_dir():
                dest = dest / "index.html"
            if not dest.exists():
                problems.append((page_path.relative_to(root), tag, key, target, "missing file"))
                continue
            if parts.fragment and dest.suffix == ".html":
                if unquote(parts.fragment) not in _parse(dest, cache).ids:
                    problems.append((page_path.relative_to(root), tag, key, target,
                                     "missing anchor"))
    return problems


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0] if argv else "docs/_build/html")
    if not root.is_dir():
        print(f"check_html: {root} is not a folder: build the docs first (make docs)",
              file=sys.stderr)
        return 2
    problems = broken_links(root)
    n_pages = len(list(root.rglob("*.html")))
    for page, tag, key, target, reason in problems:
        print(f"{page}: <{tag} {key}={target!r}>: {reason}")
    print(f"check_html: {n_pages} pages, {len(problems)} broken internal links or images")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
