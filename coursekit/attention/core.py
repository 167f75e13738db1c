"""Scaled dot-product attention, masks and multi-head attention (notebook 07)."""

__all__: list[str] = []
