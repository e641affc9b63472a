"""ferrule-llamacpp: local GGUF models (Qwen3, SmolLM2, ...) on llama-cpp-python, on any machine."""
