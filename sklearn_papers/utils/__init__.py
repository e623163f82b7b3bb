"""Helpers shared by several families of the package."""
