"""ferrule-exllama: Qwen3 on exllamav2 (CUDA GPUs). torch and exllamav2 are imported only
when a component is defined (see `ferrule_exllama.backend`)."""
