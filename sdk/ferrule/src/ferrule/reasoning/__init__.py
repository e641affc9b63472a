"""Agno's ``agno.reasoning``: thinking before answering, by a reasoning model's own thoughts
(``native``: `openai`, `anthropic`, `gemini`, `ollama` say which models think) or by a
reasoning agent writing steps (`default`, `step`), run by `manager.ReasoningManager`;
`helpers` put the reasoning into a run's messages."""
