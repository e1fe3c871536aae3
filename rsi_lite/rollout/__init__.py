"""Episodes to trajectories: the continuous rollout engine and the Trajectory record every stage reads and writes."""
