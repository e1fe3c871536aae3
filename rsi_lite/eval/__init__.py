"""Evaluation: Mean@k per suite of a checkpoint, what doing nothing scores on the same tasks, two checkpoints compared
task by task on held-out instances, and how an actor's replies read turn by turn."""
