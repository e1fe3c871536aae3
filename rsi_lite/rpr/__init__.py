"""Recursive Policy Refinement: PPO with a learned critic inherited from cycle to cycle (config, stage, update, batches, frontier)."""
