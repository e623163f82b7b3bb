"""estimation family (see DESIGN.md)."""

__all__ = []
