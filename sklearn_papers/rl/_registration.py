"""The package's environments registered with gymnasium (``gymnasium.make`` by id)."""

import gymnasium

__all__ = ["ENVIRONMENT_IDS", "register_environments"]

# id -> entry point; every maker takes gymnasium.make's ``render_mode``
ENVIRONMENT_IDS = {
    "sklearn_papers/GridWorld-v0": "sklearn_papers.rl._environments:GridWorld",
    "sklearn_papers/RandomGridWorld-v0": "sklearn_papers.rl._environments:make_grid_world",
    "sklearn_papers/DelayedChain-v0": "sklearn_papers.rl._environments:DelayedChain",
}


def register_environments():
    """Register the ids of :data:`ENVIRONMENT_IDS` with gymnasium (once; idempotent).

    ``GridWorld`` and ``make_grid_world`` truncate their episodes themselves
    (``max_steps``), and the delayed chain ends by itself, so no ``TimeLimit`` is added.
    """
    for env_id, entry_point in ENVIRONMENT_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)
