"""The policy: the bundled model prepared from its GGUF, the actor and critic adapters on it (QLoRA, LoRA or full), and the generation engines (gen/)."""
