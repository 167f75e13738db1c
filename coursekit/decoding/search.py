"""Greedy decoding and beam search, shared by every sequence model of the course."""

__all__: list[str] = []
