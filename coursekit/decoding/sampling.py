"""Sampling the next token: temperature, top-k and nucleus (top-p) filtering."""

__all__: list[str] = []
