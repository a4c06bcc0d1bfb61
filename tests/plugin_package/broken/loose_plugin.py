"""A broken plug-in: its search algorithm's config is not a frozen dataclass."""

from gomoku_jax import plugins


@plugins.register("search algorithm", "loose")
class Loose:
    """Not a dataclass at all."""
