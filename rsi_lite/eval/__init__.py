"""Evaluation: Mean@k per suite of a checkpoint, and what doing nothing scores on the same tasks."""
