"""Check built HTML docs as a reader meets them: every internal link and image resolves.

Run after the build (``make docs`` does)::

    python docs/check_html.py docs/_build/html

Two checks:

* **Every page, parsed.** Every ``.html`` file under the folder is read with the standard
  library's HTML parser and each ``href`` and ``src`` that points inside the site is
  checked: the target file exists and, for a ``#fragment``, the target page has an element
  with that ``id`` (or an ``<a name>``); an ``<img>``'s file is not empty and starts as
  its kind does (PNG, JPEG or GIF signature, or an ``<svg`` element). External links
  (``http:``, ``https:``, ``mailto:``) are not fetched.
* **Seven pages, opened in a headless browser.** When Chromium's headless shell (Debian:
  ``apt-get install chromium-headless-shell``) or Chromium is on ``PATH`` (or named by
  ``--browser`` or ``$CHECK_HTML_BROWSER``), the index, the getting-started page, one
  user-guide page, one results page, one API page, one gallery example and the gallery's
  index are opened in it, at a desktop and at a phone width (``WIDTHS``), driven through
  the DevTools protocol over a pipe (standard library only): every image must be decoded
  by the browser with a non-zero size, every internal link the browser resolves must reach
  an existing file and anchor, the page must be no wider than the window (wide tables and
  code scroll in their own box), and the page must raise no JavaScript exception. Without a browser this check is
  skipped and says so (``--require-browser`` makes that an error).

Exits 1 listing every problem, 2 when the folder is missing (or a required browser is),
0 when there is none.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname


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


_SIGNATURES = {".png": (b"\x89PNG\r\n\x1a\n",), ".jpg": (b"\xff\xd8\xff",),
               ".jpeg": (b"\xff\xd8\xff",), ".gif": (b"GIF87a", b"GIF89a")}


def image_problem(path):
    """Why the image file ``path`` cannot be shown (empty, or not what its suffix says),
    or None."""
    head = Path(path).read_bytes()[:4096]
    suffix = Path(path).suffix.lower()
    if not head:
        return "empty image"
    if suffix == ".svg":
        return None if b"<svg" in head else "not an SVG image"
    if suffix in _SIGNATURES and not head.startswith(_SIGNATURES[suffix]):
        return f"not a {suffix[1:].upper()} image"
    return None


def broken_links(root):
    """``[(page, tag, attribute, target, reason)]`` for every internal link or image of the
    HTML files under ``root`` that does not resolve."""
    root = Path(root).resolve()
    cache, problems = {}, []
    for page_path in sorted(root.rglob("*.html")):
        if "_static" in page_path.relative_to(root).parts:
            continue  # the theme's assets (a Jinja macro file among them), not pages
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
            if tag == "img" and dest.is_file():
                reason = image_problem(dest)
                if reason:
                    problems.append((page_path.relative_to(root), tag, key, target, reason))
                    continue
            if parts.fragment and dest.suffix == ".html":
                if unquote(parts.fragment) not in _parse(dest, cache).ids:
                    problems.append((page_path.relative_to(root), tag, key, target,
                                     "missing anchor"))
    return problems


BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")

# run in the page once it has loaded: every image decoded (or why not), every link as the
# browser resolves it
_PAGE_SCRIPT = """(async () => {
  const images = await Promise.all(Array.from(document.images, async (img) => {
    img.loading = "eager";
    let error = null;
    try { await img.decode(); } catch (e) { error = String(e); }
    return {src: img.currentSrc || img.src, error: error, width: img.naturalWidth};
  }));
  const links = Array.from(document.querySelectorAll("a[href]"), (a) => a.href);
  // how far the page is wider than the window (a table or code block that does not
  // scroll inside its own box pushes the whole page sideways)
  const page = document.documentElement;
  const overflow = page.scrollWidth - page.clientWidth;
  return {images: images, links: links, title: document.title, overflow: overflow};
})()"""


def find_browser(name=None):
    """The path of a Chromium to run headless: ``name``, ``$CHECK_HTML_BROWSER`` or the
    first of ``BROWSERS`` on ``PATH``; None when there is none."""
    for candidate in ([name] if name else []) + [os.environ.get("CHECK_HTML_BROWSER")] \
            + list(BROWSERS):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


class _Browser:
    """A headless Chromium driven through the DevTools protocol over a pipe (file
    descriptors 3 and 4, NUL-separated JSON), so no WebSocket client is needed."""

    def __init__(self, path, timeout=60.0):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the child must see the pipes as its descriptors 3 and 4
        os.set_inheritable(to_browser_r, True)
        os.set_inheritable(from_browser_w, True)

        def arrange():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        args = [path, "--headless", "--remote-debugging-pipe", "--no-sandbox",
                "--disable-gpu", "--no-first-run", "--allow-file-access-from-files",
                "--disable-dev-shm-usage", "about:blank"]
        self._process = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         preexec_fn=arrange, close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer, self._next_id, self.timeout = b"", 0, timeout
        self.events = []

    def _read_message(self, deadline):
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the browser did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise RuntimeError("the browser closed its pipe (did it start?)")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None):
        """Send one command and return its result (events that arrive meanwhile are
        kept in ``events``)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method, session=None):
        deadline = time.monotonic() + self.timeout
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def close(self):
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


# the window widths pages are opened at: a desktop and a phone
WIDTHS = (1280, 390)


def open_page(browser, path, width=WIDTHS[0]):
    """Open the file ``path`` in a new tab of ``browser``, ``width`` CSS pixels wide;
    return what ``_PAGE_SCRIPT`` found and the JavaScript exceptions the page raised."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget",
                           {"targetId": target, "flatten": True})["sessionId"]
    try:
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": 900, "deviceScaleFactor": 1,
                      "mobile": width < 600}, session=session)
        browser.send("Page.enable", session=session)
        browser.send("Runtime.enable", session=session)
        browser.send("Page.navigate", {"url": Path(path).resolve().as_uri()}, session=session)
        browser.wait_for("Page.loadEventFired", session=session)
        result = browser.send("Runtime.evaluate",
                              {"expression": _PAGE_SCRIPT, "awaitPromise": True,
                               "returnByValue": True}, session=session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"the check script failed: {result['exceptionDetails']}")
        found = result["result"]["value"]
        found["exceptions"] = [
            e["params"]["exceptionDetails"].get("exception", {}).get("description")
            or e["params"]["exceptionDetails"].get("text")
            for e in browser.events
            if e.get("method") == "Runtime.exceptionThrown" and e.get("sessionId") == session]
        return found
    finally:
        browser.send("Target.closeTarget", {"targetId": target})


def reader_pages(root):
    """The pages opened in the browser: the index, the getting-started page, a user-guide
    page, a results page (wide tables), an API page, a gallery example and the gallery's
    index (its thumbnails); of each kind the first (by name) that shows an image, else the
    first."""
    root = Path(root)
    kinds = [("index", [root / "index.html"]),
             ("getting started", [root / "getting_started.html"]),
             ("user guide", sorted((root / "user_guide").glob("*.html"))),
             ("results", sorted((root / "results").glob("*.html"))),
             ("API", sorted((root / "generated").glob("sklearn_papers.*.html"))),
             ("gallery", sorted((root / "auto_examples").glob("plot_*.html"))),
             ("gallery index", [root / "auto_examples" / "index.html"])]
    cache, pages = {}, []
    for kind, found in kinds:
        found = [f for f in found if f.is_file()]
        with_image = [f for f in found
                      if any(tag == "img" for tag, _, _ in _parse(f.resolve(), cache).links)]
        if found:
            pages.append((kind, (with_image or found)[0]))
    return pages


def browser_problems(root, pages, browser_path):
    """``(problems, n_images, n_links)``: ``[(page, tag, attribute, target, reason)]`` for
    the ``pages`` as the browser at ``browser_path`` shows them at each of ``WIDTHS`` (see
    the module docstring), and how many images and internal links it checked."""
    root = Path(root).resolve()
    cache, problems, n_images, n_links = {}, [], 0, 0
    browser = _Browser(browser_path)
    try:
        for (_, page_path), width in [(p, w) for p in pages for w in WIDTHS]:
            page_path = Path(page_path).resolve()
            name = page_path.relative_to(root)
            found = open_page(browser, page_path, width)
            if found.get("overflow", 0) > 1:
                problems.append((name, "html", "width", f"{width} px",
                                 f"the page is {found['overflow']} px wider than a "
                                 f"{width} px window (a table or code block that does not "
                                 "scroll in its own box)"))
            n_images += len(found["images"])
            for image in found["images"]:
                if image["error"] or not image["width"]:
                    problems.append((name, "img", "src", image["src"],
                                     f"not shown by the browser ({image['error'] or 'size 0'})"))
            for link in found["links"]:
                parts = urlsplit(link)
                if parts.scheme != "file":
                    continue
                n_links += 1
                dest = Path(url2pathname(parts.path))
                if dest.is_dir():
                    dest = dest / "index.html"
                if not dest.exists():
                    problems.append((name, "a", "href", link, "missing file"))
                elif parts.fragment and dest.suffix == ".html" \
                        and unquote(parts.fragment) not in _parse(dest, cache).ids:
                    problems.append((name, "a", "href", link, "missing anchor"))
            for text in found["exceptions"]:
                problems.append((name, "script", "-", "-", f"JavaScript exception: {text}"))
    finally:
        browser.close()
    return problems, n_images, n_links


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="docs/_build/html")
    parser.add_argument("--browser", default=None,
                        help="the Chromium to open pages in (default: the first found)")
    parser.add_argument("--no-browser", action="store_true",
                        help="the parsed check only")
    parser.add_argument("--require-browser", action="store_true",
                        help="fail when no browser is found")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    root = Path(args.root)
    if not root.is_dir():
        print(f"check_html: {root} is not a folder: build the docs first (make docs)",
              file=sys.stderr)
        return 2
    problems = broken_links(root)
    n_pages = len(list(root.rglob("*.html")))
    print(f"check_html: {n_pages} pages parsed, {len(problems)} broken internal links or "
          "images")
    browser = None if args.no_browser else find_browser(args.browser)
    if browser:
        pages = reader_pages(root)
        opened, n_images, n_links = browser_problems(root, pages, browser)
        print(f"check_html: opened in {Path(browser).name}: "
              + ", ".join(f"{kind} ({path.relative_to(root)})" for kind, path in pages)
              + f"; {n_images} images, {n_links} internal links, {len(opened)} problems")
        problems += opened
    elif args.require_browser:
        print("check_html: no headless browser found (apt-get install "
              "chromium-headless-shell)", file=sys.stderr)
        return 2
    elif not args.no_browser:
        print("check_html: no headless browser found, pages not opened (apt-get install "
              "chromium-headless-shell to open them)")
    for page, tag, key, target, reason in problems:
        print(f"{page}: <{tag} {key}={target!r}>: {reason}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
