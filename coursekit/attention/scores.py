"""Alignment score functions and attention layers for recurrent decoders (notebook 06)."""

__all__: list[str] = []
