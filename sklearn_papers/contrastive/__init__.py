"""contrastive family (see DESIGN.md)."""

__all__ = []
