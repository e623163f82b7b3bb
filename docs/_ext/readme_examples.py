"""``.. readme-example:: TEXT``: show the README's Python snippet that contains ``TEXT``.

The getting-started page shows the README's quick-start snippets through this directive,
so the page and the README cannot drift apart, and tests/test_readme.py runs every one.
"""

import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_snippets(path=README):
    """The README's ``python`` fenced blocks, in order (as tests/test_readme.py reads them)."""
    return re.findall(r"```python\n(.*?)```", Path(path).read_text(encoding="utf-8"),
                      flags=re.S)


class ReadmeExample(Directive):
    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        text = self.arguments[0]
        found = [s for s in readme_snippets() if text in s]
        if len(found) != 1:
            raise self.error(f"{len(found)} README snippets contain {text!r}; one is needed")
        code = found[0].rstrip("\n")
        block = nodes.literal_block(code, code)  # same text: Sphinx highlights it
        block["language"] = "python"
        self.state.document.settings.record_dependencies.add(str(README))
        return [block]


def setup(app):
    app.add_directive("readme-example", ReadmeExample)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
