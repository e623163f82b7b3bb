"""
=======================================================================
Learned Policy Gradient: meta-learning an RL update rule on grid worlds
=======================================================================

Meta-train the update rule of :class:`~sklearn_papers.rl.LearnedPolicyGradient` (Oh et al.
2020) on a few random 5 x 5 grid worlds, then train fresh agents with it on held-out grids and
compare their lifetime return with A2C's and with an untrained rule. The right panel shows
the first component of the learned prediction vector ``y(s)`` of one LPG agent on a sparse
held-out grid, next to the agent's greedy action in each cell.
"""

import matplotlib.pyplot as plt
import numpy as np
import torch

from sklearn_papers.rl import A2C, LearnedPolicyGradient, sample_grid_worlds

torch.set_num_threads(1)
train = sample_grid_worlds(12, random_state=0)
test = sample_grid_worlds(6, random_state=1, exclude=train)

lpg = LearnedPolicyGradient(n_agents=16, lifetime=50, max_meta_steps=100, random_state=0)
lpg.fit(train)
# lifetime return: the rewards fresh agents collect while they learn (A2C.score would
# evaluate an A2C's fitted agents instead)
scores = {"LPG": lpg.lifetime_returns(test).mean(),
          "A2C": A2C(lifetime=50, random_state=0).lifetime_returns(test).mean(),
          "untrained rule": lpg.untrained().lifetime_returns(test).mean()}
for name, value in scores.items():
    print(f"{name:>15}: mean lifetime return {value:.1f} on {len(test)} held-out grids")

env = next(e for e in test if e.n_objects == 1)  # a sparse grid: one rewarding object
agent = lpg.train_agent(env)
cells = np.arange(env.height * env.width)
y0 = agent.predict_values(cells)[:, 0].reshape(env.height, env.width)
arrows = np.array(["↑", "↓", "←", "→"])[agent.predict(cells)].reshape(env.height, env.width)

fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
ax.bar(list(scores), list(scores.values()), color=["C0", "C1", "C7"])
ax.set(ylabel="mean lifetime return (50 updates x 20 steps)",
       title="Fresh agents on held-out grids")
im = ax2.imshow(y0, cmap="viridis")
for r in range(env.height):
    for c in range(env.width):
        ax2.text(c, r, arrows[r, c], ha="center", va="center", color="w", fontsize=14)
goal = env.objects[0]
ax2.scatter([goal[1]], [goal[0]], marker="*", s=300, color="gold", label="reward +1")
ax2.scatter([env.start[1]], [env.start[0]], marker="o", s=120, color="red", label="start")
ax2.set(title="y(s)[0] of an LPG agent and its greedy actions", xticks=[], yticks=[])
ax2.legend(loc="lower left", fontsize=8)
fig.colorbar(im, ax=ax2)
fig.tight_layout()
plt.show()
