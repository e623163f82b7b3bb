"""Progressive neural networks (Rusu et al. 2016): columns, lateral adapters, frozen history.

A :class:`ProgressiveNetwork` holds one *column* (an MLP with its own output head) per task.
Column ``k`` computes, for hidden layers ``i = 1..L`` and the output layer ``i = L + 1``
(Rusu et al. 2016, eq. 1 and eq. 2)::

    h_i^(k) = relu(W_i^(k) h_{i-1}^(k) + b_i^(k) + lateral_i^(k)(h_{i-1}^(<k)))

with ``h_0 = x`` (standardised) for every column, no ReLU on the output layer, and
``h_{i-1}^(<k)`` the concatenated layer-``(i - 1)`` activations of the earlier columns
``0..k-1``. Lateral connections enter every layer that has an earlier-column input other
than ``x`` itself, that is layers ``2..L + 1`` (into layer 1 a lateral from ``x`` would only
duplicate ``W_1``); every one of them, the first included, uses the same adapter:

* ``"linear"``: ``U h^(<k)`` (eq. 1, one matrix ``U`` per earlier column, concatenated);
* ``"mlp"``: ``U relu(V (alpha h^(<k)) + c)`` (eq. 2): a learned scalar ``alpha`` per layer,
  a projection ``V`` of the concatenated earlier activations to ``n_{i-1}`` units (the width
  of one column's layer ``i - 1``), then ``U``.

Adding a column freezes every earlier one (``requires_grad=False``, evaluation mode), so the
outputs of earlier tasks cannot change. The module knows nothing of scikit-learn.
"""

import torch
from torch import nn

__all__ = ["LateralAdapter", "ProgressiveColumn", "ProgressiveNetwork",
           "count_progressive_parameters", "grow_linear"]


class LateralAdapter(nn.Module):
    """Lateral connection from earlier columns' layer ``i - 1`` into layer ``i``.

    Parameters
    ----------
    in_features : int
        Width of the concatenated earlier activations, ``k * n_{i-1}``.
    out_features : int
        Width of the target layer ``n_i`` (or of the output head).
    projection : int
        ``n_{i-1}``: width of ``V``'s output for ``adapter="mlp"`` (unused for ``"linear"``).
    adapter : {"mlp", "linear"}
        Rusu et al. (2016) eq. 2 (``U relu(V alpha h + c)``) or eq. 1 (``U h``).
    alpha_init : float
        Initial value of the learned scalar ``alpha`` (``"mlp"`` only).

    Notes
    -----
    Input ``(B, in_features)`` float32, output ``(B, out_features)``. ``U`` has no bias: the
    target layer's own ``W`` carries one.
    """

    def __init__(self, in_features, out_features, projection, adapter="mlp", alpha_init=0.1):
        super().__init__()
        if adapter not in ("mlp", "linear"):
            raise ValueError(f"adapter must be 'mlp' or 'linear', got {adapter!r}")
        self.adapter = adapter
        if adapter == "mlp":
            self.alpha = nn.Parameter(torch.tensor(float(alpha_init)))
            self.V = nn.Linear(in_features, projection)
            self.U = nn.Linear(projection, out_features, bias=False)
        else:
            self.U = nn.Linear(in_features, out_features, bias=False)

    def forward(self, h):
        if self.adapter == "mlp":
            return self.U(torch.relu(self.V(self.alpha * h)))
        return self.U(h)


class ProgressiveColumn(nn.Module):
    """One column: ``L`` hidden layers and an output head, with lateral adapters.

    Parameters
    ----------
    n_features : int
        Input width ``n_0``.
    hidden_layer_sizes : tuple of int
        ``(n_1, ..., n_L)``, the same for every column.
    n_outputs : int
        Width of this column's output head (the task's number of classes).
    n_previous : int
        Number of earlier columns ``k`` it receives laterals from (0 for the first).
    adapter : {"mlp", "linear"}
        Lateral adapter of every lateral layer (see :class:`LateralAdapter`).
    alpha_init : float
        Initial ``alpha`` of the ``"mlp"`` adapters.
    norm : {"layer"} or None
        Layer normalisation of every hidden pre-activation (after adding the laterals), or
        none. Layer norm keeps no running statistics, so frozen columns stay frozen.
    """

    def __init__(self, n_features, hidden_layer_sizes, n_outputs, n_previous=0,
                 adapter="mlp", alpha_init=0.1, norm=None):
        super().__init__()
        sizes = [int(n_features), *map(int, hidden_layer_sizes)]
        targets = sizes[1:] + [int(n_outputs)]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, targets))
        self.norms = nn.ModuleList(
            nn.LayerNorm(b) if norm == "layer" else nn.Identity() for b in sizes[1:])
        # laterals[j] feeds layer j + 1 (0-based), i.e. layers 2..L+1 in the paper's numbering
        self.laterals = nn.ModuleList()
        if n_previous > 0:
            for i in range(1, len(targets)):
                self.laterals.append(LateralAdapter(n_previous * sizes[i], targets[i], sizes[i],
                                                    adapter=adapter, alpha_init=alpha_init))
        self.n_previous = int(n_previous)

    def forward(self, x, previous):
        """Activations of every layer.

        Parameters
        ----------
        x : torch.Tensor of shape (B, n_features)
            Standardised input.
        previous : list of list of torch.Tensor
            ``previous[j][i]``: hidden activation ``h_{i+1}`` of earlier column ``j``
            (``len(previous) == n_previous``).

        Returns
        -------
        hidden : list of torch.Tensor
            ``[h_1, ..., h_L]``, each ``(B, n_i)``.
        logits : torch.Tensor of shape (B, n_outputs)
        """
        hidden = []
        h = x
        n_layers = len(self.layers)
        for i, layer in enumerate(self.layers):
            a = layer(h)
            if i > 0 and self.n_previous > 0:
                a = a + self.laterals[i - 1](torch.cat([p[i - 1] for p in previous], dim=1))
            if i == n_layers - 1:
                return hidden, a
            h = torch.relu(self.norms[i](a))
            hidden.append(h)
        raise AssertionError("unreachable")  # pragma: no cover


class ProgressiveNetwork(nn.Module):
    """Columns added one task at a time; each earlier column frozen when one is added.

    Parameters
    ----------
    n_features : int
        Input width.
    hidden_layer_sizes : tuple of int
        Hidden widths of every column.
    adapter : {"mlp", "linear"}, default="mlp"
        Lateral adapter (Rusu et al. 2016 eq. 2 or eq. 1).
    alpha_init : float, default=0.1
        Initial ``alpha`` of the ``"mlp"`` adapters.
    norm : {"layer"} or None, default=None
        Normalisation of hidden pre-activations.
    mean, std : array-like of shape (n_features,), default=None
        Input standardisation ``(x - mean) / std`` (buffers; identity when None).
    shared : bool, default=False
        The fine-tuning baseline: one column (trunk) shared by every task, trained on each
        new task, one output head per task; no freezing, no laterals.

    Notes
    -----
    ``forward(x, task_index)`` maps ``(B, n_features)`` float32 to the ``(B, n_outputs)``
    logits of that task's head. Columns ``> task_index`` are never evaluated, so adding
    columns cannot change an earlier task's output.
    """

    def __init__(self, n_features, hidden_layer_sizes, *, adapter="mlp", alpha_init=0.1,
                 norm=None, mean=None, std=None, shared=False):
        super().__init__()
        self.n_features = int(n_features)
        self.hidden_layer_sizes = tuple(int(s) for s in hidden_layer_sizes)
        self.adapter = adapter
        self.alpha_init = float(alpha_init)
        self.norm = norm
        self.shared = bool(shared)
        mean = torch.zeros(self.n_features) if mean is None else torch.as_tensor(mean)
        std = torch.ones(self.n_features) if std is None else torch.as_tensor(std)
        self.register_buffer("mean", mean.detach().clone().float())
        self.register_buffer("std", std.detach().clone().float())
        self.columns = nn.ModuleList()
        self.heads = nn.ModuleList()  # shared mode only: one Linear head per task

    @property
    def n_tasks(self):
        """Number of task heads."""
        return len(self.heads) if self.shared else len(self.columns)

    def add_task(self, n_outputs):
        """Add a task: a new column (freezing the others), or a new head in shared mode.

        Parameters
        ----------
        n_outputs : int
            Number of output units (classes) of the new task.

        Returns
        -------
        task_index : int
        """
        if self.shared:
            if not self.columns:
                self.columns.append(_Trunk(self.n_features, self.hidden_layer_sizes, self.norm))
            self.heads.append(nn.Linear(self.hidden_layer_sizes[-1], int(n_outputs)))
            return len(self.heads) - 1
        for column in self.columns:
            column.requires_grad_(False)
            column.eval()
        self.columns.append(ProgressiveColumn(
            self.n_features, self.hidden_layer_sizes, n_outputs, n_previous=len(self.columns),
            adapter=self.adapter, alpha_init=self.alpha_init, norm=self.norm))
        return len(self.columns) - 1

    def grow_outputs(self, task_index, n_outputs):
        """Widen the output head of the latest task to ``n_outputs`` units (new classes in a
        continued task); existing units keep their weights.

        Parameters
        ----------
        task_index : int
            Must be the latest task (earlier ones are frozen).
        n_outputs : int
            New width, at least the current one.
        """
        if task_index != self.n_tasks - 1:
            raise ValueError(f"only the latest task's head can grow, not task {task_index}")
        if self.shared:
            self.heads[task_index] = grow_linear(self.heads[task_index], n_outputs)
            return
        column = self.columns[task_index]
        column.layers[-1] = grow_linear(column.layers[-1], n_outputs)
        if column.n_previous > 0:
            lateral = column.laterals[-1]
            lateral.U = grow_linear(lateral.U, n_outputs)

    def trainable_parameters(self, task_index):
        """The parameters that training task ``task_index`` may change: that task's column
        (progressive), or the trunk and that task's head (shared)."""
        if self.shared:
            return [*self.columns[0].parameters(), *self.heads[task_index].parameters()]
        return list(self.columns[task_index].parameters())

    def train(self, mode=True):
        # Frozen columns stay in evaluation mode; skorch calls this before every batch, so
        # they are not visited at all (no recursion into them).
        self.training = mode
        last = len(self.columns) - 1
        for i, column in enumerate(self.columns):
            if self.shared or i == last:
                column.train(mode)
            elif column.training:
                column.eval()
        for head in self.heads:
            head.train(mode)
        return self

    def forward(self, x, task_index=-1):
        x = (x - self.mean) / self.std
        if self.shared:
            return self.heads[task_index](self.columns[0](x))
        k = range(len(self.columns))[task_index]
        previous = []
        for j in range(k):
            hidden, _ = self.columns[j](x, previous)
            previous.append(hidden)
        return self.columns[k](x, previous)[1]


def grow_linear(linear, n_outputs):
    """A copy of ``linear`` with ``n_outputs >= out_features`` output units: the existing
    rows (and biases) copied, the new ones initialised as ``nn.Linear`` does (torch's RNG).

    Parameters
    ----------
    linear : torch.nn.Linear
    n_outputs : int

    Returns
    -------
    torch.nn.Linear
    """
    n_old = linear.out_features
    if n_outputs < n_old:
        raise ValueError(f"cannot shrink a layer from {n_old} to {n_outputs} outputs")
    if n_outputs == n_old:
        return linear
    new = nn.Linear(linear.in_features, n_outputs, bias=linear.bias is not None)
    new = new.to(device=linear.weight.device, dtype=linear.weight.dtype)
    with torch.no_grad():
        new.weight[:n_old] = linear.weight
        if linear.bias is not None:
            new.bias[:n_old] = linear.bias
    new.requires_grad_(linear.weight.requires_grad)
    return new


class _Trunk(nn.Module):
    """The shared MLP trunk of the fine-tuning baseline: ``L`` ReLU layers."""

    def __init__(self, n_features, hidden_layer_sizes, norm=None):
        super().__init__()
        sizes = [int(n_features), *hidden_layer_sizes]
        blocks = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            blocks += [nn.Linear(a, b), nn.LayerNorm(b) if norm == "layer" else nn.Identity(),
                       nn.ReLU()]
        self.body = nn.Sequential(*blocks)

    def forward(self, x):
        return self.body(x)


def count_progressive_parameters(n_features, hidden_layer_sizes, n_outputs, *, adapter="mlp",
                                 norm=None):
    """Closed-form parameter count of a progressive network after each task.

    Parameters
    ----------
    n_features : int
    hidden_layer_sizes : tuple of int
    n_outputs : sequence of int
        Output width of each task's column, in task order.
    adapter : {"mlp", "linear"}, default="mlp"
    norm : {"layer"} or None, default=None

    Returns
    -------
    counts : list of int
        Total number of parameters with ``1, 2, ...`` columns. Column ``k`` (``k`` earlier
        columns) adds ``sum_i (n_{i-1} + 1) n_i`` (+ ``2 n_i`` with layer norm) for its own
        layers and, for each lateral layer ``i = 2..L+1`` with target width ``m_i``,
        ``k n_{i-1} m_i`` (linear) or ``1 + (k n_{i-1} + 1) n_{i-1} + n_{i-1} m_i`` (mlp).
    """
    sizes = [int(n_features), *map(int, hidden_layer_sizes)]
    counts, total = [], 0
    for k, n_out in enumerate(n_outputs):
        targets = sizes[1:] + [int(n_out)]
        own = sum((a + 1) * b for a, b in zip(sizes, targets))
        if norm == "layer":
            own += sum(2 * b for b in sizes[1:])
        lateral = 0
        if k > 0:
            for i in range(1, len(targets)):
                src, m = k * sizes[i], targets[i]
                lateral += (src * m if adapter == "linear"
                            else 1 + (src + 1) * sizes[i] + sizes[i] * m)
        total += own + lateral
        counts.append(total)
    return counts
