"""The same rsi_lite stages, distributed: FSDP2 sharding, launch scripts, the memory plan."""
