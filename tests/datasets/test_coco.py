"""load_coco_instances on a tiny COCO file written by the test."""

import json
import sys

import numpy as np
import pytest
from skimage.io import imsave

from sklearn_papers.datasets import load_coco_instances

try:
    import pycocotools  # noqa: F401
except ImportError:
    pycocotools = None

# every test but the one about the missing package reads a file with pycocotools
needs_pycocotools = pytest.mark.skipif(pycocotools is None, reason="needs pycocotools")


def _write_coco(tmp_path):
    """Two images of different sizes; categories 3 ("coin") and 7 ("ring"); a polygon, an
    uncompressed RLE, an object lying on a larger one, and a crowd region."""
    rng = np.random.RandomState(0)
    (tmp_path / "img").mkdir()
    imsave(tmp_path / "img" / "a.png", rng.randint(0, 256, (20, 30), dtype=np.uint8))
    imsave(tmp_path / "img" / "b.png", rng.randint(0, 256, (16, 12, 3), dtype=np.uint8),
           check_contrast=False)
    rle_mask = np.zeros((16, 12), dtype=np.uint8)
    rle_mask[2:6, 3:9] = 1
    # column-major run lengths, starting with a run of zeros
    flat = rle_mask.flatten(order="F")
    runs, value, count = [], 0, 0
    for v in flat:
        if v != value:
            runs.append(count)
            value, count = v, 0
        count += 1
    runs.append(count)
    doc = {
        "images": [{"id": 5, "file_name": "a.png", "height": 20, "width": 30},
                   {"id": 9, "file_name": "b.png", "height": 16, "width": 12}],
        "categories": [{"id": 7, "name": "ring"}, {"id": 3, "name": "coin"}],
        "annotations": [
            {"id": 1, "image_id": 5, "category_id": 3, "iscrowd": 0,
             "segmentation": [[2, 2, 12, 2, 12, 12, 2, 12]], "area": 100,
             "bbox": [2, 2, 10, 10]},
            {"id": 2, "image_id": 5, "category_id": 7, "iscrowd": 0,  # on top of 1
             "segmentation": [[5, 5, 8, 5, 8, 8, 5, 8]], "area": 9, "bbox": [5, 5, 3, 3]},
            {"id": 3, "image_id": 5, "category_id": 3, "iscrowd": 1,
             "segmentation": [[20, 2, 28, 2, 28, 10, 20, 10]], "area": 64,
             "bbox": [20, 2, 8, 8]},
            {"id": 4, "image_id": 9, "category_id": 7, "iscrowd": 0,
             "segmentation": {"counts": runs, "size": [16, 12]}, "area": 24,
             "bbox": [3, 2, 6, 4]},
        ],
    }
    path = tmp_path / "instances.json"
    path.write_text(json.dumps(doc))
    return path, tmp_path / "img", rle_mask


@needs_pycocotools
def test_coco_file_becomes_images_and_label_maps(tmp_path):
    path, image_dir, rle_mask = _write_coco(tmp_path)
    data = load_coco_instances(path, image_dir)
    assert data.category_names == ["background", "coin", "ring"]
    assert data.category_ids == [3, 7] and data.image_ids == [5, 9]
    assert [im.shape for im in data.images] == [(20, 30), (16, 12, 3)]
    a, b = data.instance_maps
    assert a.shape == (20, 30) and b.shape == (16, 12) and a.dtype == np.int64
    # the small object (annotation 2, a ring) lies on the coin and stays visible
    assert set(np.unique(a)) == {0, 1, 2} and data.annotation_ids[0] == [1, 2]
    assert a[6, 6] == 2 and data.semantic_maps[0][6, 6] == 2
    assert a[3, 3] == 1 and data.semantic_maps[0][3, 3] == 1
    assert not a[:, 20:].any()  # the crowd region is left out
    np.testing.assert_array_equal(b > 0, rle_mask.astype(bool))
    assert set(np.unique(data.semantic_maps[1])) == {0, 2}
    X, y = load_coco_instances(path, image_dir, return_X_y=True)
    assert len(X) == len(y) == 2 and np.array_equal(y[0], a)


@needs_pycocotools
def test_coco_images_fit_both_estimators(tmp_path):
    from sklearn_papers.vision import InstanceSegmenter, MaskRCNN

    path, image_dir, _ = _write_coco(tmp_path)
    data = load_coco_instances(path, image_dir)
    grey = [im if im.ndim == 2 else im[..., 0] for im in data.images]
    MaskRCNN(width=8, max_epochs=1, random_state=0).fit(grey, data.instance_maps,
                                                        data.semantic_maps)
    seg = InstanceSegmenter(width=4, embedding_dim=2, max_epochs=1, random_state=0)
    pred = seg.fit(grey, data.instance_maps, data.semantic_maps).predict(grey)
    assert [p.shape for p in pred] == [(20, 30), (16, 12)]


@needs_pycocotools
def test_missing_files_and_sizes_are_named(tmp_path):
    path, image_dir, _ = _write_coco(tmp_path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_coco_instances(tmp_path / "nope.json", image_dir)
    (image_dir / "b.png").unlink()
    with pytest.raises(FileNotFoundError, match=r"'b.png' \(id 9\)"):
        load_coco_instances(path, image_dir)
    imsave(image_dir / "b.png", np.zeros((5, 5), dtype=np.uint8), check_contrast=False)
    with pytest.raises(ValueError, match=r"'b.png' \(id 9\) is 5 x 5 pixels but the "
                                         r"annotation file says 16 x 12"):
        load_coco_instances(path, image_dir)


def test_missing_pycocotools_names_the_extra(tmp_path, monkeypatch):
    path, image_dir, _ = _write_coco(tmp_path)
    monkeypatch.setitem(sys.modules, "pycocotools", None)
    monkeypatch.setitem(sys.modules, "pycocotools.coco", None)
    with pytest.raises(ImportError, match=r"pip install 'sklearn_papers\[coco\]'"):
        load_coco_instances(path, image_dir)


@needs_pycocotools
@pytest.mark.parametrize("edit, match", [
    (lambda d: d.pop("images"), r"no 'images' list"),
    (lambda d: d.pop("categories"), r"no 'categories' list"),
    (lambda d: d.update(annotations={}), r"'annotations' must be a list; got dict"),
    (lambda d: d["images"][1].pop("height"), r"images\[1\] has no 'height'"),
    (lambda d: d["images"][0].update(width="30"), r"images\[0\]\['width'\] = '30' is not a "
                                                  r"positive integer"),
    (lambda d: d["annotations"][1].pop("segmentation"),
     r"annotations\[1\] \(id 2\) has no 'segmentation'"),
    (lambda d: d["annotations"][0].update(segmentation=[[1, 2, 3]]),
     r"annotations\[0\] \(id 1\)\['segmentation'\] = \[\[1, 2, 3\]\] is not a list of "
     r"polygons"),
    (lambda d: d["annotations"][3].update(category_id=11),
     r"annotations\[3\] \(id 4\)\['category_id'\] = 11 is not the id of an entry of "
     r"'categories'"),
    (lambda d: d["annotations"][2].update(image_id=6), r"\['image_id'\] = 6 is not the id"),
    (lambda d: d["annotations"][3]["segmentation"].update(size=[12, 16]),
     r"annotation id 4 of image 'b.png' \(id 9\) has an RLE of size \[12, 16\]"),
    # duplicate ids: pycocotools indexes by id and keeps one entry, so an image, an
    # object or a class would be dropped without a word
    (lambda d: d["images"].append(dict(d["images"][0], file_name="b.png", height=16,
                                       width=12)),
     r"images\[2\] has id 5, already the id of images\[0\]"),
    (lambda d: d["annotations"][1].update(id=1),
     r"annotations\[1\] has id 1, already the id of annotations\[0\]"),
    (lambda d: d["categories"].append({"id": 7, "name": "other"}),
     r"categories\[2\] has id 7, already the id of categories\[0\]"),
])
def test_malformed_annotation_files_name_the_entry(tmp_path, edit, match):
    path, image_dir, _ = _write_coco(tmp_path)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=match):
        load_coco_instances(path, image_dir)


@needs_pycocotools
def test_files_that_are_not_json_or_images_are_named(tmp_path):
    path, image_dir, _ = _write_coco(tmp_path)
    (image_dir / "a.png").write_text("not an image")
    with pytest.raises(ValueError, match=r"image 'a.png' \(id 5\) could not be read"):
        load_coco_instances(path, image_dir)
    path.write_text("{'images': []}")
    with pytest.raises(ValueError, match=r"is not a JSON file"):
        load_coco_instances(path, image_dir)
    path.write_text("[]")
    with pytest.raises(ValueError, match=r"holds a list, not a COCO object"):
        load_coco_instances(path, image_dir)


@needs_pycocotools
def test_load_coco_instances_refuses_iscrowd_that_is_not_0_or_1(tmp_path):
    # the string "0" is truthy: the object would be dropped as a crowd region
    path, image_dir, _ = _write_coco(tmp_path)
    doc = json.loads(path.read_text())
    doc["annotations"][0]["iscrowd"] = "0"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"annotations\[0\] \(id 1\)\['iscrowd'\] = '0' "
                                         r"is not 0 or 1"):
        load_coco_instances(path, image_dir)


@needs_pycocotools
@pytest.mark.parametrize("segmentation, match", [
    ([[float("nan"), 2, 12, 2, 12, 12]], r"polygon 0 has coordinate 0 = nan"),
    ([[2, 2, 1e9, 2, 12, 12]], r"polygon 0 has coordinate 2 = 1000000000.0"),
    ({"counts": [-5, 197], "size": [20, 30]}, r"negative RLE count"),
    ({"counts": [5, 3], "size": [20, 30]}, r"RLE counts summing to 8 pixels, but its size "
                                           r"\[20, 30\] has 600"),
    ({"counts": "!!garbage", "size": [20, 30]}, r"RLE that pycocotools cannot decode"),
])
def test_load_coco_instances_names_a_segmentation_pycocotools_cannot_rasterize(
        tmp_path, segmentation, match):
    # NaN coordinates crash pycocotools' rasterizer (the process dies), huge ones exhaust
    # memory, negative counts overflow, short counts give a silently empty mask
    path, image_dir, _ = _write_coco(tmp_path)
    doc = json.loads(path.read_text())
    doc["annotations"][0]["segmentation"] = segmentation
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"annotation id 1 of image 'a.png' \(id 5\) .*"
                                         + match):
        load_coco_instances(path, image_dir)


@needs_pycocotools
def test_load_coco_instances_reads_a_file_without_annotations(tmp_path):
    path, image_dir, _ = _write_coco(tmp_path)
    doc = json.loads(path.read_text())
    del doc["annotations"], doc["categories"]
    path.write_text(json.dumps(doc))
    data = load_coco_instances(path, image_dir)
    assert data.category_names == ["background"] and data.annotation_ids == [[], []]
    assert [m.shape for m in data.instance_maps] == [(20, 30), (16, 12)]
    assert not any(m.any() for m in data.instance_maps + data.semantic_maps)
