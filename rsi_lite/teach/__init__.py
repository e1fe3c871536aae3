"""What the notebooks call: budget flags, exercises with checkers, the interactive explorers, transcript views."""
