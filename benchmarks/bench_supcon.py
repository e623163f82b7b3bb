"""Benchmark: SupCon loss forward + backward against pytorch-metric-learning's SupConLoss.

Same tensors for both: ``features`` of shape (1024, 2, 128) (batch x views x dims) and 10
classes. pytorch-metric-learning takes the flattened (2048, 128) embeddings with labels
repeated per view. First both values are checked to agree (they do where the definitions
coincide: every anchor has a positive, the batch has negatives, no base-temperature
rescaling); then the median time of ``repeats`` forward + backward passes is printed with
the ratio ours / theirs (target: <= 1).

Run: ``python benchmarks/bench_supcon.py [--repeats 20] [--batch 1024] [--device cpu]``.
Needs ``pytorch-metric-learning`` (the ``bench`` extra).
"""

import argparse
import statistics
import sys
from pathlib import Path
import time

import torch

from sklearn_papers.nn._supcon import supcon_loss

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _record, beside this script


def _time(fn, features, repeats):
    times = []
    for _ in range(repeats + 2):
        x = features.detach().clone().requires_grad_(True)
        if x.is_cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn(x).backward()
        if x.is_cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times[2:])  # first two are warm-up


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--views", type=int, default=2)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--temperature", type=float, default=0.1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)

    from pytorch_metric_learning.losses import SupConLoss as PMLSupConLoss

    gen = torch.Generator().manual_seed(0)
    features = torch.randn(args.batch, args.views, args.dim, generator=gen).to(args.device)
    labels = torch.randint(0, 10, (args.batch,), generator=gen).to(args.device)
    flat_labels = labels.repeat_interleave(args.views)
    pml = PMLSupConLoss(temperature=args.temperature)

    def ours(x):
        return supcon_loss(x, labels, temperature=args.temperature)

    def theirs(x):
        return pml(x.reshape(-1, x.shape[-1]), flat_labels)

    v_ours, v_theirs = ours(features).item(), theirs(features).item()
    rel = abs(v_ours - v_theirs) / abs(v_theirs)
    print(f"loss value  ours {v_ours:.6f}  pytorch-metric-learning {v_theirs:.6f}  "
          f"rel. diff {rel:.2e}")
    if rel > 1e-4:
        raise SystemExit("values disagree where the definitions coincide")

    t_ours = _time(ours, features, args.repeats)
    t_theirs = _time(theirs, features, args.repeats)
    print(f"forward+backward, batch {args.batch} x {args.views} views x {args.dim} dims on "
          f"{args.device} ({torch.get_num_threads()} threads), median of {args.repeats}:")
    print(f"  sklearn_papers supcon_loss          {1e3 * t_ours:8.2f} ms")
    print(f"  pytorch-metric-learning SupConLoss  {1e3 * t_theirs:8.2f} ms")
    print(f"  ratio ours / theirs                 {t_ours / t_theirs:8.2f}  (target <= 1)")

    from importlib.metadata import version

    from _record import record

    record("supcon", title="SupCon loss, forward + backward",
           peer=f"pytorch-metric-learning {version('pytorch-metric-learning')} SupConLoss",
           argv=argv, rows=[{
               "what": f"batch {args.batch} x {args.views} views x {args.dim} dims on "
                       f"{args.device}, median of {args.repeats}",
               "ours": 1e3 * t_ours, "peer": 1e3 * t_theirs, "unit": "ms",
               "better": "lower"}],
           notes=f"Both losses take the same tensors and agree to {rel:.1e} (relative).")


if __name__ == "__main__":
    main()
