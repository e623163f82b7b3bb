"""Reinforcement learning: grid-world environments (gymnasium API, batched core), LearnedPolicyGradient (Oh et al. 2020), A2C."""

from sklearn_papers.rl._a2c import A2C
from sklearn_papers.rl._agents import MLPAgent, TabularAgent
from sklearn_papers.rl._environments import (
    BatchedChain,
    BatchedGridWorld,
    DelayedChain,
    GridWorld,
    GymEnvBatch,
    make_batch,
    make_grid_world,
    sample_grid_worlds,
)
from sklearn_papers.rl._learned_policy_gradient import LearnedPolicyGradient

__all__ = [
    "A2C",
    "BatchedChain",
    "BatchedGridWorld",
    "DelayedChain",
    "GridWorld",
    "GymEnvBatch",
    "LearnedPolicyGradient",
    "MLPAgent",
    "TabularAgent",
    "make_batch",
    "make_grid_world",
    "sample_grid_worlds",
]
