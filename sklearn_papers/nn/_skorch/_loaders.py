"""Data loaders of the training batches."""

import torch

__all__ = ["EvenBatchLoader", "EvenBatchSampler", "PassBatchLoader", "PassBatchSampler"]


class EvenBatchSampler(torch.utils.data.Sampler):
    """Batches of near-equal size: ``n`` rows in ``ceil(n / batch_size)`` batches whose
    sizes differ by at most one, in a fresh random order each pass with ``shuffle``.

    A ``DataLoader`` with ``batch_size`` leaves the remainder ``n % batch_size`` for a last
    batch, which can hold a few rows: a gradient step from them is as large as any other
    and, under batch normalization, their statistics enter the running estimates with the
    full momentum (the neural fingerprint's running estimates then carry the statistics of
    a handful of molecules into prediction).

    Parameters
    ----------
    n_rows : int
        Rows of the data set.
    batch_size : int
        Largest batch.
    shuffle : bool
        Draw a new order from ``generator`` on each pass (``torch.randperm``, as
        ``RandomSampler``), else keep the rows' order.
    generator : torch.Generator or None
        Source of the orders.
    """

    def __init__(self, n_rows, batch_size, shuffle, generator=None):
        self.n_rows, self.batch_size = int(n_rows), int(batch_size)
        self.shuffle, self.generator = bool(shuffle), generator

    def __len__(self):
        return -(-self.n_rows // self.batch_size) if self.n_rows else 0

    def __iter__(self):
        if not self.n_rows:
            return
        order = (torch.randperm(self.n_rows, generator=self.generator) if self.shuffle
                 else torch.arange(self.n_rows))
        yield from (chunk.tolist() for chunk in torch.tensor_split(order, len(self)))


class EvenBatchLoader(torch.utils.data.DataLoader):
    """A ``DataLoader`` over batches of near-equal size (:class:`EvenBatchSampler`), taking
    skorch's ``iterator_train`` arguments (``batch_size``, ``shuffle``, ``generator``,
    ``collate_fn``, ...)."""

    def __init__(self, dataset, batch_size=1, shuffle=False, generator=None, **kwargs):
        sampler = EvenBatchSampler(len(dataset), batch_size, shuffle, generator)
        super().__init__(dataset, batch_sampler=sampler, generator=generator, **kwargs)


class PassBatchSampler(torch.utils.data.Sampler):
    """Batches of ``batch_size`` rows (the last of a pass smaller) in a fresh random order
    each pass: one ``torch.randperm(n_rows, generator=generator)`` per pass, cut in order.

    Parameters
    ----------
    n_rows, batch_size : int
    generator : torch.Generator
        Source of the orders (only the orders draw from it).
    """

    def __init__(self, n_rows, batch_size, generator):
        self.n_rows, self.batch_size, self.generator = int(n_rows), int(batch_size), generator

    def __len__(self):
        return -(-self.n_rows // self.batch_size)

    def __iter__(self):
        order = torch.randperm(self.n_rows, generator=self.generator)
        for start in range(0, self.n_rows, self.batch_size):
            yield order[start:start + self.batch_size].tolist()


class PassBatchLoader(torch.utils.data.DataLoader):
    """A ``DataLoader`` over the batches of :class:`PassBatchSampler`, taking skorch's
    ``iterator_train`` arguments. ``generator`` orders the rows; the loader's own base
    seed is drawn from a separate generator, so that only the orders draw from it."""

    def __init__(self, dataset, batch_size=1, shuffle=True, generator=None, **kwargs):
        sampler = PassBatchSampler(len(dataset), batch_size, generator)
        super().__init__(dataset, batch_sampler=sampler,
                         generator=torch.Generator().manual_seed(0), **kwargs)
