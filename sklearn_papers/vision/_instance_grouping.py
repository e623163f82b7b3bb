"""Training targets and post-processing of InstanceSegmenter (Milioto et al. 2019): the
low-resolution targets (mode downsampling, centre heatmaps), the grouping of pixels into
instances (centres, mean shift, connected components) and the upsampling of label maps
(nearest neighbour, SLIC superpixel votes). numpy, scipy and scikit-image only."""

import math
import warnings

import numpy as np
from scipy import ndimage

from sklearn_papers.vision._scales import typical_size

__all__ = []


def _mode_downsample(maps, stride):
    """Most frequent label of each ``stride x stride`` block (ties: the smallest)."""
    if stride == 1:
        return maps
    n, H, W = maps.shape
    blocks = maps.reshape(n, H // stride, stride, W // stride, stride)
    blocks = blocks.transpose(0, 1, 3, 2, 4).reshape(n, H // stride, W // stride, -1)
    s = np.sort(blocks, axis=-1)
    best = s[..., 0].copy()
    best_count = np.zeros(best.shape, dtype=np.int64)
    k = s.shape[-1]
    for j in range(k):
        count = (s == s[..., j:j + 1]).sum(-1)
        better = count > best_count
        best[better], best_count[better] = s[..., j][better], count[better]
    return best


def _center_heatmap(instance_map):
    """Gaussian centre targets, 1 at each instance's innermost pixel and its 8-neighbours,
    0 off instances."""
    heat = np.zeros(instance_map.shape, dtype=np.float32)
    rows, cols = np.indices(instance_map.shape)
    for index, sl in enumerate(ndimage.find_objects(instance_map), start=1):
        if sl is None:
            continue
        mask = instance_map == index
        inner = ndimage.distance_transform_edt(np.pad(mask, 1))[1:-1, 1:-1]
        cy, cx = np.unravel_index(np.argmax(inner), mask.shape)
        sigma = max(0.7, math.sqrt(mask.sum() / math.pi) / 3)
        g = np.exp(-((rows - cy) ** 2 + (cols - cx) ** 2) / (2 * sigma**2))
        heat[mask] = g[mask]
        # The centre and its 8-neighbours inside the instance are positives: a small
        # plateau that a smooth network output can exceed the threshold on (the few local
        # maxima it may leave are merged as duplicates by their embeddings). On 200
        # make_scenes images, 15 epochs, it found more centres than a single pixel or the
        # 4-neighbours did (best Dice 0.781 vs 0.760 on 60 test scenes, threshold 0.7).
        plateau = (np.maximum(np.abs(rows - cy), np.abs(cols - cx)) <= 1) & mask
        heat[plateau] = 1.0
    return heat


def _relabel(instance):
    """Consecutive ids 1..k in the order of the sorted ids (0 stays background).

    ``np.unique`` keeps the cost in the number of pixels, whatever the ids' size.
    """
    ids, inverse = np.unique(instance, return_inverse=True)
    inverse = inverse.reshape(instance.shape).astype(np.int64)
    if ids.size and ids[0] == 0:
        return inverse
    return inverse + 1


def _pad_to(arr, stride):
    """Pad (n, ..., H, W) at the bottom/right to multiples of ``stride`` (edge values)."""
    H, W = arr.shape[-2:]
    ph, pw = (-H) % stride, (-W) % stride
    if ph == 0 and pw == 0:
        return arr
    pad = [(0, 0)] * (arr.ndim - 2) + [(0, ph), (0, pw)]
    return np.pad(arr, pad, mode="edge")


# ----------------------------------------------------------------------------- grouping
def _peaks(sem, heat, threshold):
    """Candidate centres: local maxima (3 x 3) of the heatmap above ``threshold`` on
    object pixels."""
    return (heat >= ndimage.maximum_filter(heat, size=3, mode="constant")) & (
        heat > threshold) & (sem > 0)


def _class_centres(pix, peaks, heat, emb, merge_distance):
    """Centres ``(row, col)`` kept among the peaks of one class (pixels ``pix``): in
    decreasing heatmap order, a peak whose embedding lies closer than ``merge_distance``
    to a kept centre's is a duplicate."""
    cand = np.argwhere(peaks & pix)
    order = np.argsort(-heat[cand[:, 0], cand[:, 1]], kind="stable")
    kept, kept_emb = [], []
    for r, col in cand[order]:
        e = emb[:, r, col]
        if kept_emb and (np.min(np.linalg.norm(np.array(kept_emb) - e, axis=1))
                         < merge_distance):
            continue
        kept.append((r, col))
        kept_emb.append(e)
    return kept


def _count_centres(sem, heat, emb, threshold, merge_distance):
    """Number of centres that centre seeding keeps in one low-resolution image (the
    objects the centre head finds, whatever the grouping)."""
    peaks = _peaks(sem, heat, threshold)
    return sum(len(_class_centres(sem == c, peaks, heat, emb, merge_distance))
               for c in np.unique(sem[peaks]))


def _group_centers(sem, heat, emb, threshold, merge_distance):
    """Instances of one low-resolution image by centre seeding (the paper's inference).

    Centres are local maxima (3 x 3) of the heatmap above ``threshold`` on object pixels;
    per class, in decreasing heatmap order, a centre whose embedding lies closer than
    ``merge_distance`` to a kept centre's is a duplicate. Every pixel of the class joins
    the kept centre with the closest embedding among the centres of its own connected
    component of the class (objects apart in the image are never merged); a component
    without a centre is one instance.
    """
    peaks = _peaks(sem, heat, threshold)
    out = np.zeros(sem.shape, dtype=np.int64)
    classes, scores = [], []
    for c in np.unique(sem[sem > 0]):
        pix = sem == c
        comp, n_comp = ndimage.label(pix)
        kept = _class_centres(pix, peaks, heat, emb, merge_distance)
        centres = [emb[:, r, col] for r, col in kept]
        centre_scores = [float(heat[r, col]) for r, col in kept]
        centre_comp = [comp[r, col] for r, col in kept]
        centres = np.array(centres).reshape(len(centres), emb.shape[0])
        centre_comp = np.array(centre_comp, dtype=np.int64)
        base = len(classes)
        classes.extend([int(c)] * len(centres))
        scores.extend(centre_scores)
        pe = emb[:, pix].T  # (n_pix, D)
        pc = comp[pix]
        assign = np.full(pe.shape[0], -1, dtype=np.int64)
        seeded = np.isin(pc, centre_comp)
        # each pixel against the centres of its own component only: memory and time
        # grow with the pixels, not with pixels times centres
        by_comp = np.argsort(pc, kind="stable")
        starts = np.searchsorted(pc[by_comp], np.arange(n_comp + 2))
        for k in np.unique(centre_comp):
            idx = by_comp[starts[k]:starts[k + 1]]
            own = np.nonzero(centre_comp == k)[0]
            d2 = ((pe[idx, None, :] - centres[None, own, :]) ** 2).sum(-1)
            assign[idx] = own[np.argmin(d2, axis=1)]
        label = base + 1 + assign
        # components without a centre: one instance each
        unseeded = np.setdiff1d(np.arange(1, n_comp + 1), centre_comp)
        lookup = np.zeros(n_comp + 1, dtype=np.int64)
        lookup[unseeded] = base + len(centres) + 1 + np.arange(unseeded.size)
        label[~seeded] = lookup[pc[~seeded]]
        out[pix] = label
        if unseeded.size:
            classes.extend([int(c)] * unseeded.size)
            scores.extend(float(v) for v in ndimage.maximum(heat, comp, unseeded))
    return out, classes, scores


def _components(pix, heat, out, classes, scores, c):
    lab, n = ndimage.label(pix)
    base = len(classes)
    out[pix] = base + lab[pix]
    for k in range(1, n + 1):
        classes.append(int(c))
        scores.append(float(heat[lab == k].max()) if heat is not None else 1.0)


def _group_components(sem, heat, emb, threshold, merge_distance):
    """Baseline: connected components of each class of the semantic map."""
    out = np.zeros(sem.shape, dtype=np.int64)
    classes, scores = [], []
    for c in np.unique(sem[sem > 0]):
        _components(sem == c, None, out, classes, scores, c)
    return out, classes, scores


def _group_mean_shift(sem, heat, emb, threshold, merge_distance):
    """Baseline (De Brabandere et al. 2017): mean-shift clustering of each class's
    embeddings, bandwidth ``merge_distance``; the centre head is not used."""
    from sklearn.cluster import MeanShift

    out = np.zeros(sem.shape, dtype=np.int64)
    classes, scores = [], []
    for c in np.unique(sem[sem > 0]):
        pix = sem == c
        pe = emb[:, pix].T.astype(np.float64)
        if pe.shape[0] < 2:
            labels = np.zeros(pe.shape[0], dtype=np.int64)
        else:
            with warnings.catch_warnings():  # "Binning data failed": all points seed
                warnings.simplefilter("ignore", UserWarning)
                try:
                    labels = MeanShift(bandwidth=merge_distance, bin_seeding=True,
                                       cluster_all=True).fit_predict(pe)
                except ValueError:
                    # No point within the bandwidth of any bin centre: in d dimensions a
                    # point can lie up to bandwidth * sqrt(d) / 2 from its bin's centre.
                    # Seeding at the points themselves always finds a neighbourhood.
                    labels = MeanShift(bandwidth=merge_distance, bin_seeding=False,
                                       cluster_all=True).fit_predict(pe)
        base = len(classes)
        out[pix] = base + 1 + labels
        k = int(labels.max()) + 1
        classes.extend([int(c)] * k)
        scores.extend(np.bincount(labels, minlength=k).astype(float) / labels.size)
    return out, classes, scores


# SLIC settings, chosen on make_scenes ground truth downsampled by 2 and 4 (the vote then
# recovers the most of the full-resolution maps): superpixels of about 16 pixels, Lab
# compactness 40, Gaussian pre-smoothing 0.5 pixel against the pixel noise.
_SLIC_PIXELS_PER_SEGMENT = 16
_SLIC_COMPACTNESS = 40.0
_SLIC_SIGMA = 0.5

_GROUPINGS = {"centers": _group_centers, "mean_shift": _group_mean_shift,
              "connected_components": _group_components}


def _upsample(low, stride, shape, image, slic, n_segments, compactness):
    """Full-resolution label map from a low-resolution one: nearest neighbour, then (with
    ``slic``) the majority label of each SLIC superpixel of the image."""
    up = np.repeat(np.repeat(low, stride, axis=0), stride, axis=1)[: shape[0], : shape[1]]
    if not slic or up.max() == 0:
        return up
    from skimage.segmentation import slic as skimage_slic

    img = np.moveaxis(image, 0, -1)
    lo, hi = float(img.min()), float(img.max())
    img = (img - lo) / (hi - lo) if hi > lo else np.zeros_like(img)
    channel_axis = -1 if img.shape[-1] in (3, 4) else None
    if channel_axis is None:
        img = img.mean(-1)
    segments = skimage_slic(img, n_segments=n_segments, compactness=compactness,
                            sigma=_SLIC_SIGMA, start_label=0, channel_axis=channel_axis,
                            convert2lab=channel_axis is not None)
    n_labels = int(up.max()) + 1
    votes = np.bincount(segments.ravel() * n_labels + up.ravel(),
                        minlength=(int(segments.max()) + 1) * n_labels)
    winner = votes.reshape(-1, n_labels).argmax(1)
    return winner[segments]


def _instance_size(instance_map):
    """Typical ``sqrt(area)`` of the instances of a map, weighted by area (NaN if none)."""
    areas = np.bincount(instance_map.ravel())[1:]
    areas = areas[areas > 0]
    return typical_size(np.sqrt(areas), areas)
