"""The paper's equations, pure tensor and number functions: rewards (S, FDR, SPR), advantages (GAE, TB-GAE), PPO losses. Nothing of ours is imported here."""
