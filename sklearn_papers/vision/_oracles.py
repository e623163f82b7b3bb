"""Oracle label maps of instance segmentation: what a grouping or an upsampling step
gives when fed the true maps, the floor of its error."""

import numpy as np

from sklearn_papers.metrics._instances import nearest_upsample
from sklearn_papers.vision._instance_grouping import (
    _SLIC_COMPACTNESS,
    _SLIC_PIXELS_PER_SEGMENT,
    _group_components,
    _mode_downsample,
    _upsample,
)


def _at_stride(maps, stride):
    """Label ``maps`` (n, h, w), edge-padded to a multiple of ``stride``, at that stride:
    the most frequent label of each block, of shape (n, ceil(h / stride), ceil(w / stride))."""
    h, w = maps.shape[1:]
    return _mode_downsample(np.pad(maps, [(0, 0), (0, -h % stride), (0, -w % stride)],
                                   mode="edge"), stride)


def _components_oracle(semantic_maps, stride=1):
    """Instance maps (n, h, w), int64, of the connected components of the true
    ``semantic_maps`` (n, h, w), found at ``stride`` and upsampled nearest: the best
    connected-components grouping can do with a perfect semantic head."""
    shape = semantic_maps.shape[1:]
    low = semantic_maps if stride == 1 else _at_stride(semantic_maps, stride)
    return np.stack([nearest_upsample(_group_components(s, None, None, 0, 0)[0], stride, shape)
                     for s in low])


def _stride_round_trip(instance_maps, images, stride):
    """``(nearest, slic)``: the true ``instance_maps`` (n, h, w) taken to ``stride`` and
    back, by nearest upsampling and by :class:`~sklearn_papers.vision.InstanceSegmenter`'s
    SLIC vote on ``images`` (n, h, w, 3); both (n, h, w), the upsampling's error alone."""
    shape = instance_maps.shape[1:]
    n_segments = max(1, int(round(shape[0] * shape[1] / _SLIC_PIXELS_PER_SEGMENT)))
    low_true = _at_stride(instance_maps, stride)
    slic = np.stack(
        [_upsample(low, stride, shape, img, stride > 1, n_segments, _SLIC_COMPACTNESS)
         for low, img in zip(low_true, np.moveaxis(images, -1, 1))])
    return nearest_upsample(low_true, stride, shape), slic
