"""Every Python snippet of docs/user_guide/images.rst runs, in order, with short training."""

import re
from pathlib import Path

import numpy as np
import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "images.rst"

# Fewer epochs and narrower networks than the page's defaults, so that the page runs in
# seconds; everything else runs as written.
FAST = {
    "MaskRCNN(random_state=0)": "MaskRCNN(random_state=0, max_epochs=1, width=8)",
    "InstanceSegmenter(random_state=0)":
        "InstanceSegmenter(random_state=0, max_epochs=1, width=8)",
}


def _snippets(text):
    blocks = []
    for match in re.finditer(r"^\.\. code-block:: python\n\n((?:(?: {4}.*)?\n)+)", text,
                             flags=re.M):
        lines = match.group(1).splitlines()
        blocks.append("\n".join(line[4:] for line in lines) + "\n")
    return blocks


def test_page_has_the_snippets_the_fast_settings_replace():
    text = PAGE.read_text()
    assert len(_snippets(text)) >= 7
    for old in FAST:
        assert old in text


def test_images_guide_snippets_run(tmp_path, monkeypatch):
    pytest.importorskip("pycocotools")
    import torch

    monkeypatch.chdir(tmp_path)
    code = "".join(_snippets(PAGE.read_text()))
    for old, new in FAST.items():
        code = code.replace(old, new)
    namespace = {}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        exec(compile(code, str(PAGE), "exec"), namespace)
    finally:
        torch.set_num_threads(threads)
    assert namespace["labels"].max() == 24
    assert namespace["X_train"].shape == (96, 64, 64)
    assert len(namespace["rcnn"].anchor_sizes_) == 3
    assert namespace["page_X"].shape == (140, 64, 64)
    assert namespace["page_X"].dtype == np.uint8
    assert namespace["page_rcnn"].input_scale_ == 2.0
    assert namespace["page_segmenter"].input_scale_ == 2.0
    assert namespace["rcnn"].input_scale_ == 1.0
    assert namespace["segmenter"].input_scale_ == 1.0
