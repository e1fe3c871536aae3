"""The same rsi_lite stages on a GPU cluster, on verl: the kit's TB-GAE inside verl's PPO trainer, the terminal
episode as a verl agent loop, self-rewrite's SFT on verl's SFT trainer, the cycle driver, the launch scripts and the
memory plan (scale_up/README.md)."""
