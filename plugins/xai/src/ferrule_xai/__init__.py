"""ferrule-xai: xAI's Grok models over its OpenAI-compatible Chat Completions API."""
