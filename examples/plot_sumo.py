"""
==========================================================
SUMO: unbiased log-partition estimates vs ELBO and IWAE
==========================================================

Estimate ``log Z`` of an unnormalised two-component Gaussian mixture (``Z = 2 pi``) with
the ELBO, IWAE (k=5) and SUMO (Luo et al., 2020) from the same proposal ``q = N(0, 5I)``.
ELBO and IWAE are biased low; SUMO is unbiased but heavy-tailed.
"""

import math

import matplotlib.pyplot as plt
import numpy as np
import torch

from sklearn_papers.estimation import LogPartitionEstimator


def energy(x):
    """U(x) of 0.5 N([-2,0], I) + 0.5 N([2,0], 4I), scaled so that Z = 2 pi."""
    d2 = x[:, 1] ** 2
    a = -((x[:, 0] + 2) ** 2 + d2) / 2 - math.log(2)
    b = -((x[:, 0] - 2) ** 2 + d2) / 8 - math.log(8)
    return -torch.logaddexp(a, b)


q = torch.distributions.MultivariateNormal(torch.zeros(2), 5 * torch.eye(2))
bins = np.linspace(-3, 6, 100)
fig, ax = plt.subplots(figsize=(7, 4))
for method in ["elbo", "iwae", "sumo"]:
    est = LogPartitionEstimator(energy, proposal=q, method=method, fit_proposal=False,
                                n_estimates=50_000, random_state=0).fit()
    print(f"{method:>5}: {est.log_partition_:.4f} ± {est.log_partition_stderr_:.4f}")
    ax.hist(np.clip(est.estimates_, bins[0], bins[-1]), bins=bins, density=True,
            histtype="step", label=f"{method.upper()}: mean {est.log_partition_:.3f}")
ax.axvline(math.log(2 * math.pi), color="k", ls="--", label="log Z = log 2π")
ax.set(xlabel="estimate of log Z (clipped to [-3, 6])", ylabel="density",
       title="ELBO and IWAE are biased low; SUMO is unbiased")
ax.legend()
plt.show()
