"""load_coco_instances: a COCO instance-segmentation file as images and label maps."""

import json
import os

import numpy as np
from sklearn.utils import Bunch

from sklearn_papers.utils._sklearn_compat import validate_params

__all__ = ["load_coco_instances"]


def _import_coco():
    try:
        from pycocotools.coco import COCO
    except ImportError as exc:
        raise ImportError(
            "load_coco_instances needs pycocotools, an optional dependency: install it with "
            "`pip install 'sklearn_papers[coco]'` (or `pip install pycocotools`).") from exc
    return COCO


_FORMAT = ("see the format at https://cocodataset.org/#format-data (object "
           "detection / segmentation)")


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _check_list(doc, key, required):
    if key not in doc:
        if required:
            raise ValueError(f"the annotation file has no '{key}' list; {_FORMAT}.")
        return []
    if not isinstance(doc[key], list):
        raise ValueError(f"the annotation file's '{key}' must be a list; got "
                         f"{type(doc[key]).__name__}.")
    return doc[key]


def _check_entry(entry, where, fields):
    """``entry`` is a dict whose ``fields`` (name -> (check, wanted)) pass their check."""
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object (a dict); got {type(entry).__name__}.")
    for key, (check, wanted) in fields.items():
        if key not in entry:
            raise ValueError(f"{where} has no '{key}' ({wanted}); it has keys "
                             f"{sorted(map(str, entry))}.")
        if not check(entry[key]):
            raise ValueError(f"{where}['{key}'] = {entry[key]!r:.80} is not {wanted}.")


def _is_segmentation(seg):
    """A list of polygons (each an even number >= 6 of coordinates) or an RLE dict."""
    if isinstance(seg, dict):
        counts, size = seg.get("counts"), seg.get("size")
        return (isinstance(size, list) and len(size) == 2 and all(map(_is_int, size))
                and (isinstance(counts, str) or (isinstance(counts, list)
                                                 and all(map(_is_int, counts)))))
    return isinstance(seg, list) and len(seg) > 0 and all(
        isinstance(poly, list) and len(poly) >= 6 and len(poly) % 2 == 0
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in poly)
        for poly in seg)


def _check_document(doc, path):
    """The parts of a COCO instances document that :func:`load_coco_instances` reads,
    each error naming the entry (by position and id) and what it should hold."""
    if not isinstance(doc, dict):
        raise ValueError(f"annotation_json {path!r} holds a {type(doc).__name__}, not a "
                         f"COCO object with 'images', 'annotations' and 'categories'; "
                         f"{_FORMAT}.")
    images = _check_list(doc, "images", True)
    annotations = _check_list(doc, "annotations", False)
    categories = _check_list(doc, "categories", bool(annotations))
    positive = (lambda v: _is_int(v) and v > 0, "a positive integer")
    for j, info in enumerate(images):
        _check_entry(info, f"images[{j}]", {
            "id": (_is_int, "an integer id"),
            "file_name": (lambda v: isinstance(v, str) and v != "", "a file name"),
            "height": positive, "width": positive})
    for j, cat in enumerate(categories):
        _check_entry(cat, f"categories[{j}]", {"id": (_is_int, "an integer id")})
    _check_unique(images, "images")
    _check_unique(categories, "categories")
    image_ids = {info["id"] for info in images}
    cat_ids = {cat["id"] for cat in categories}
    for j, ann in enumerate(annotations):
        where = f"annotations[{j}]" + (f" (id {ann['id']})" if isinstance(ann, dict)
                                       and "id" in ann else "")
        _check_entry(ann, where, {
            "id": (_is_int, "an integer id"),
            "image_id": (lambda v: v in image_ids, "the id of an entry of 'images'"),
            "category_id": (lambda v: v in cat_ids, "the id of an entry of 'categories'"),
            "segmentation": (_is_segmentation,
                             "a list of polygons [[x1, y1, x2, y2, x3, y3, ...], ...] or "
                             "an RLE {'counts': ..., 'size': [height, width]}")})
        if "iscrowd" in ann and ann["iscrowd"] not in (0, 1):  # "0" would read as a crowd
            raise ValueError(f"{where}['iscrowd'] = {ann['iscrowd']!r:.80} is not 0 or 1 "
                             "(1 marks a crowd region, which the loader leaves out).")
    _check_unique(annotations, "annotations")


def _check_unique(entries, key):
    """Ids of ``doc[key]`` are unique (pycocotools keeps the last entry of an id)."""
    first = {}
    for j, entry in enumerate(entries):
        if entry["id"] in first:
            raise ValueError(f"{key}[{j}] has id {entry['id']}, already the id of "
                             f"{key}[{first[entry['id']]}]; ids must be unique within "
                             f"'{key}'.")
        first[entry["id"]] = j


def _check_segmentation(ann, h, w, where):
    """Refuse what pycocotools would rasterize wrongly or crash on: non-finite or far
    out-of-image polygon coordinates (NaN crashes the process, 1e9 exhausts memory),
    and uncompressed RLE counts that are negative or do not cover the image."""
    seg = ann["segmentation"]
    if isinstance(seg, dict):
        size = [int(v) for v in seg["size"]]
        if size != [h, w]:
            raise ValueError(f"{where} has an RLE of size {size}, but the image is "
                             f"{h} x {w} pixels.")
        counts = seg["counts"]
        if isinstance(counts, list):
            if any(c < 0 for c in counts):
                raise ValueError(f"{where} has a negative RLE count; counts are run "
                                 "lengths (>= 0).")
            if sum(counts) != h * w:
                raise ValueError(f"{where} has RLE counts summing to {sum(counts)} pixels, "
                                 f"but its size {size} has {h * w}; the runs must cover "
                                 "the image (column-major, starting with background).")
        return
    limit = 10 * (h + w)
    for k, poly in enumerate(seg):
        coords = np.asarray(poly, dtype=float)
        bad = ~np.isfinite(coords) | (np.abs(coords) > limit)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{where} polygon {k} has coordinate {i} = {float(coords[i])!r}; "
                             f"polygon coordinates must be finite pixel positions within "
                             f"{limit} of the {h} x {w} image (not normalised or another "
                             "image's).")


@validate_params(
    {"annotation_json": [str, os.PathLike],
     "image_dir": [str, os.PathLike],
     "return_X_y": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def load_coco_instances(annotation_json, image_dir, *, return_X_y=False):
    """Load a COCO instance-segmentation data set as images and label maps.

    Reads the annotation file with ``pycocotools`` (an optional dependency: the
    ``coco`` extra) and each image from ``image_dir`` with :func:`skimage.io.imread`.
    Every object's segmentation (polygons or RLE) becomes a mask; the masks of an image
    are painted into one instance map from the largest to the smallest, so that an
    object lying on a larger one stays visible where they overlap (instance maps cannot
    hold overlaps). Crowd annotations (``iscrowd=1``), which COCO's evaluation ignores,
    are left out. The result fits both :class:`~sklearn_papers.vision.MaskRCNN` and
    :class:`~sklearn_papers.vision.InstanceSegmenter`: ``fit(images, instance_maps,
    semantic_maps)``.

    Parameters
    ----------
    annotation_json : str or path-like
        COCO annotation file (``"images"``, ``"annotations"`` with ``"segmentation"``,
        ``"categories"``).
    image_dir : str or path-like
        Folder holding the images' ``file_name`` entries.
    return_X_y : bool, default=False
        Return ``(images, instance_maps)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``images``: list of n arrays ``(H, W)`` or ``(H, W, C)`` as stored (uint8 for
        PNG and JPEG files); ``instance_maps``: list of n int64 ``(H, W)`` maps (0 =
        background, objects ``1..k`` in the order of their annotation ids);
        ``semantic_maps``: list of n int64 ``(H, W)`` maps of classes ``1..K``, the
        categories in order of their COCO ids; ``category_names``: list of ``K + 1``
        names, ``"background"`` first; ``category_ids``: the COCO id of each class
        ``1..K``; ``image_ids`` and ``file_names``: per image, as in the file;
        ``annotation_ids``: per image, the COCO id of each instance ``1..k``.
    (images, instance_maps) : tuple of lists
        If ``return_X_y`` is True.

    Raises
    ------
    ImportError
        If pycocotools is not installed (the message names the extra).
    FileNotFoundError
        If the annotation file or an image is missing (the message names it).
    ValueError
        If the file is not JSON, lacks the ``"images"`` list (or ``"categories"``
        while it has annotations), an entry lacks a field the loader reads or holds
        one of the wrong type (image ``id``, ``file_name``, ``height``, ``width``;
        annotation ``id``, ``image_id`` and ``category_id`` naming existing entries,
        ``segmentation`` as polygons or RLE, ``iscrowd`` 0 or 1), two entries of
        ``"images"``, ``"annotations"`` or ``"categories"`` share an id, a polygon has a
        non-finite coordinate or one farther than ``10 * (height + width)`` from the
        image, an RLE's size differs from its image's or its counts are negative, do not
        sum to ``height * width`` or cannot be decoded, or an image's size differs from
        its ``height`` and ``width``; the message names the entry.

    References
    ----------
    .. [1] Lin, T.-Y. et al. (2014). Microsoft COCO: common objects in context. ECCV.
       :doi:`10.1007/978-3-319-10602-1_48`

    Examples
    --------
    >>> from sklearn_papers.datasets import load_coco_instances
    >>> data = load_coco_instances("annotations.json", "images/")  # doctest: +SKIP
    >>> MaskRCNN().fit(data.images, data.instance_maps, data.semantic_maps)  # doctest: +SKIP
    """
    COCO = _import_coco()
    import contextlib
    import io

    from skimage.io import imread

    annotation_json = os.fspath(annotation_json)
    if not os.path.isfile(annotation_json):
        raise FileNotFoundError(f"annotation_json {annotation_json!r} does not exist.")
    try:
        with open(annotation_json, encoding="utf-8") as f:
            doc = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"annotation_json {annotation_json!r} is not a JSON file: "
                         f"{exc}.") from None
    _check_document(doc, annotation_json)
    coco = COCO()
    coco.dataset = dict(doc, annotations=doc.get("annotations", []),
                        categories=doc.get("categories", []))
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints its progress
        coco.createIndex()
    cat_ids = sorted(coco.getCatIds())
    cat_class = {cid: k + 1 for k, cid in enumerate(cat_ids)}
    names = ["background"] + [coco.loadCats(cid)[0].get("name", str(cid)) for cid in cat_ids]
    images, instance_maps, semantic_maps = [], [], []
    image_ids, file_names, annotation_ids = [], [], []
    for img_id in sorted(coco.getImgIds()):
        info = coco.loadImgs(img_id)[0]
        path = os.path.join(os.fspath(image_dir), info["file_name"])
        if not os.path.isfile(path):
            raise FileNotFoundError(f"image {info['file_name']!r} (id {img_id}) is not in "
                                    f"image_dir {os.fspath(image_dir)!r}.")
        try:
            image = imread(path)
        except Exception as exc:  # the readers raise many types; name the file
            raise ValueError(f"image {info['file_name']!r} (id {img_id}) could not be read "
                             f"as an image: {type(exc).__name__}: {exc}") from exc
        h, w = int(info["height"]), int(info["width"])
        if image.shape[:2] != (h, w):
            raise ValueError(f"image {info['file_name']!r} (id {img_id}) is "
                             f"{image.shape[0]} x {image.shape[1]} pixels but the annotation "
                             f"file says {h} x {w}.")
        anns = [a for a in coco.loadAnns(coco.getAnnIds(imgIds=img_id))
                if not a.get("iscrowd", 0)]
        anns.sort(key=lambda a: a["id"])
        masks = []
        for a in anns:
            where = (f"annotation id {a['id']} of image {info['file_name']!r} "
                     f"(id {img_id})")
            _check_segmentation(a, h, w, where)
            try:
                masks.append(coco.annToMask(a).astype(bool))
            except ValueError as exc:  # a compressed RLE string pycocotools cannot read
                raise ValueError(f"{where} has an RLE that pycocotools cannot decode: "
                                 f"{exc}.") from exc
        inst = np.zeros((h, w), dtype=np.int64)
        sem = np.zeros((h, w), dtype=np.int64)
        for j in sorted(range(len(anns)), key=lambda j: -int(masks[j].sum())):
            inst[masks[j]] = j + 1
            sem[masks[j]] = cat_class[anns[j]["category_id"]]
        images.append(image)
        instance_maps.append(inst)
        semantic_maps.append(sem)
        image_ids.append(img_id)
        file_names.append(info["file_name"])
        annotation_ids.append([int(a["id"]) for a in anns])
    if return_X_y:
        return images, instance_maps
    return Bunch(images=images, instance_maps=instance_maps, semantic_maps=semantic_maps,
                 category_names=names, category_ids=cat_ids, image_ids=image_ids,
                 file_names=file_names, annotation_ids=annotation_ids)
