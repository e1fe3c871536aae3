"""Generation engines behind one dispatch: transformers (lockstep and continuous), CTranslate2, vLLM; their shared types."""
