"""Reinforcement learning: grid-world environments (gymnasium API, batched core), LearnedPolicyGradient (Oh et al. 2020), A2C, tabular Q-learning.

Importing this module registers the package's environments with gymnasium:
``gymnasium.make("sklearn_papers/GridWorld-v0")``, ``"sklearn_papers/RandomGridWorld-v0"``
(:func:`make_grid_world`'s keywords) and ``"sklearn_papers/DelayedChain-v0"``.
"""

from sklearn_papers.rl._a2c import A2C
from sklearn_papers.rl._agents import MLPAgent, TabularAgent
from sklearn_papers.rl._batched import BatchedChain, BatchedGridWorld, GymEnvBatch, make_batch
from sklearn_papers.rl._environments import (
    DelayedChain,
    GridWorld,
    make_grid_world,
    sample_grid_worlds,
)
from sklearn_papers.rl._evaluation import evaluate_policy
from sklearn_papers.rl._learned_policy_gradient import LearnedPolicyGradient
from sklearn_papers.rl._q_learning import q_learning
from sklearn_papers.rl._registration import register_environments
from sklearn_papers.rl._widened import SlipperyActions, widened_grid_world

register_environments()

__all__ = [
    "A2C",
    "BatchedChain",
    "BatchedGridWorld",
    "DelayedChain",
    "GridWorld",
    "GymEnvBatch",
    "LearnedPolicyGradient",
    "MLPAgent",
    "SlipperyActions",
    "TabularAgent",
    "evaluate_policy",
    "make_batch",
    "make_grid_world",
    "q_learning",
    "sample_grid_worlds",
    "widened_grid_world",
]
