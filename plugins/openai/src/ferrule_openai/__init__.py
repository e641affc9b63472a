"""ferrule-openai: OpenAI's Chat Completions API, and any OpenAI-compatible server."""
