"""Benchmark: peak memory of prediction per megapixel, MaskRCNN against InstanceSegmenter.

Both estimators are fitted at their defaults (``random_state=0``) on
``skimage.data.page()`` (191 x 384, printed characters): ground truth by a Sauvola
threshold (window 25, k 0.2), specks under 8 pixels removed, 8-connected labels; 64 x 64
tiles (step 32) of the left two thirds with their mirror images (70 images). Each model
then predicts one image of about 0.25 and 1 megapixels (the page repeated by mirroring,
objects at the training scale), at the default ``predict_scales="auto"`` and at
``(1.0,)``.

Every fit and every prediction runs in its own process (a process forked from a large
one starts with that one's RSS as its peak). The prediction's process loads the fitted
model and predicts one training tile first (torch's start-up memory), then resets its
peak RSS (``/proc/self/clear_refs``, Linux); the extra peak RSS is the process's peak
RSS (``ru_maxrss`` from ``os.wait4``) minus its RSS before the prediction. Printed: extra
peak RSS in MB and MB per megapixel, and CPU seconds of each ``fit`` and ``predict``;
recorded in ``benchmarks/results/vision_memory.json`` (MaskRCNN's figure beside
InstanceSegmenter's).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_vision_memory.py [--megapixels 0.25,1]
[--scales auto,1]``.
"""

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ESTIMATORS = ("MaskRCNN", "InstanceSegmenter")


def page_data():
    """The page (191 x 384, uint8) and its instance labels."""
    from scipy import ndimage as ndi
    from skimage import data, filters

    page = data.page()
    dark = page < filters.threshold_sauvola(page, window_size=25, k=0.2)
    labels = ndi.label(dark, structure=np.ones((3, 3)))[0]
    sizes = np.bincount(labels.ravel())
    labels[sizes[labels] < 8] = 0  # specks
    return page, ndi.label(labels > 0, structure=np.ones((3, 3)))[0]


def training_tiles(page, page_labels, size=64, step=32):
    """64 x 64 tiles (step 32) of the left two thirds and their mirror images."""
    split = page.shape[1] * 2 // 3
    image, label_map = page[:, :split], page_labels[:, :split]
    h, w = image.shape
    rows = sorted({*range(0, h - size + 1, step), h - size})
    cols = sorted({*range(0, w - size + 1, step), w - size})
    X = [image[r:r + size, c:c + size] for r in rows for c in cols]
    y = [label_map[r:r + size, c:c + size] for r in rows for c in cols]
    return (np.stack(X + [x[:, ::-1] for x in X]),
            np.stack(y + [m[:, ::-1] for m in y]))


def large_image(page, megapixels):
    """A square image of about ``megapixels``, the page repeated by mirroring."""
    side = int(round(np.sqrt(megapixels * 1e6)))
    reps = (-(-side // page.shape[0]), -(-side // page.shape[1]))
    tiled = np.block([[page[:, ::1 if j % 2 == 0 else -1][::1 if i % 2 == 0 else -1]
                       for j in range(reps[1])] for i in range(reps[0])])
    return np.ascontiguousarray(tiled[:side, :side])


def child(model_path, megapixels, scales):
    """Runs in its own process: warm up on one tile, then predict one large image."""
    import torch

    torch.set_num_threads(1)
    with open(model_path, "rb") as f:
        model = pickle.load(f)
    model.set_params(predict_scales="auto" if scales == "auto" else (float(scales),))
    page, _ = page_data()
    model.predict(page[None, :64, :64])
    image = large_image(page, megapixels)
    try:  # Linux: the peak RSS (ru_maxrss) starts again from the current RSS
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # the peak so far stays in the figure: an upper bound
        pass
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    model.predict(image[None])
    print(json.dumps({"base_kb": base, "cpu_s": time.process_time() - start,
                      "pixels": int(image.size)}))


def fit_child(name, path):
    """Runs in its own process: fit one estimator on the page tiles and pickle it."""
    import torch

    from sklearn_papers import vision

    torch.set_num_threads(1)
    X, y = training_tiles(*page_data())
    start = time.process_time()
    model = getattr(vision, name)(random_state=0).fit(X, y)
    cpu_s = time.process_time() - start
    with open(path, "wb") as f:
        pickle.dump(model, f)
    print(json.dumps({"cpu_s": cpu_s}))


def run_child(*args):
    """Run this script with ``args`` in a new process; its ``ru_maxrss`` (KB) and the
    JSON it prints last."""
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), *args],
                            stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(args)} exited with "
                           f"{os.waitstatus_to_exitcode(status)}")
    return usage.ru_maxrss, json.loads(out.strip().splitlines()[-1])


def measure(model_path, megapixels, scales):
    """Extra peak RSS (MB) and CPU seconds of one prediction, in a fresh process."""
    peak_kb, result = run_child("--child", model_path, str(megapixels), scales)
    extra_mb = (peak_kb - result["base_kb"]) / 1024  # ru_maxrss: KB on Linux
    return {"extra_mb": extra_mb, "megapixels": result["pixels"] / 1e6,
            "cpu_s": result["cpu_s"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megapixels", default="0.25,1")
    parser.add_argument("--scales", default="auto,1")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--fit", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], float(args.child[1]), args.child[2])
        return
    if args.fit:
        fit_child(*args.fit)
        return
    page, page_labels = page_data()
    print(f"{len(training_tiles(page, page_labels)[0])} training tiles, "
          f"{len(np.unique(page_labels)) - 1} objects in the page")
    results, fit_cpu = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name in ESTIMATORS:
            # fitted in a process of its own too: a child forked from a large process
            # starts with the parent's RSS as its peak
            paths[name] = os.path.join(tmp, f"{name}.pkl")
            fit_cpu[name] = run_child("--fit", name, paths[name])[1]["cpu_s"]
            print(f"{name} fit: {fit_cpu[name]:.1f} CPU s", flush=True)
        for mp in (float(v) for v in args.megapixels.split(",")):
            for scales in args.scales.split(","):
                for name in ESTIMATORS:
                    r = measure(paths[name], mp, scales)
                    results[name, mp, scales] = r
                    print(f"{name:18s} {r['megapixels']:.2f} MP predict_scales={scales}: "
                          f"extra peak RSS {r['extra_mb']:7.0f} MB "
                          f"({r['extra_mb'] / r['megapixels']:6.0f} MB per MP), "
                          f"{r['cpu_s']:.1f} CPU s", flush=True)
    from _record import record

    rows = [{"what": "fit, 70 page tiles", "ours": fit_cpu["MaskRCNN"],
             "peer": fit_cpu["InstanceSegmenter"], "unit": "CPU s", "better": "lower"}]
    for (name, mp, scales), r in results.items():
        if name != "MaskRCNN":
            continue
        peer = results["InstanceSegmenter", mp, scales]
        label = f"{mp:g} MP, predict_scales={scales}"
        rows += [{"what": f"extra peak RSS per megapixel, {label}",
                  "ours": r["extra_mb"] / r["megapixels"],
                  "peer": peer["extra_mb"] / peer["megapixels"], "unit": "MB / MP",
                  "better": "lower"},
                 {"what": f"extra peak RSS, {label}", "ours": r["extra_mb"],
                  "peer": peer["extra_mb"], "unit": "MB", "better": "lower"},
                 {"what": f"predict, {label}", "ours": r["cpu_s"], "peer": peer["cpu_s"],
                  "unit": "CPU s", "better": "lower"}]
    record("vision_memory", title="Peak memory of predict per megapixel, MaskRCNN vs "
           "InstanceSegmenter (skimage page, fitted on 64 x 64 tiles)",
           peer="sklearn_papers.vision.InstanceSegmenter at its defaults", rows=rows,
           notes="Extra peak RSS: a fresh process's peak RSS during predict minus its RSS "
                 "before it (after loading the model and predicting one tile). Images: "
                 "the page repeated by mirroring, objects at the training scale.")


if __name__ == "__main__":
    main()
