"""Reinforcement learning: grid-world environments (gymnasium API, batched core), LearnedPolicyGradient (Oh et al. 2020), A2C."""

__all__ = []
