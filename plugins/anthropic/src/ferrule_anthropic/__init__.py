"""ferrule-anthropic: Claude models through Anthropic's Messages API, as the
`anthropic_language_model` component type."""
