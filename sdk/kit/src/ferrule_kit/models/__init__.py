"""Language models: the contract every backend implements, how a plugin describes one, and
the wire dialects and helpers backends share.

- `ferrule_kit.models.lm`: the language-model contract and its stream items;
- `ferrule_kit.models.lmspec` and `ferrule_kit.models.providerspec`: a language-model
  component type's description (cheap to import from a plugin's hook module) and the
  attributes every hosted-API component takes;
- `ferrule_kit.models.chat_completions`, `ferrule_kit.models.qwen3` and
  `ferrule_kit.models.sse_model`: the OpenAI Chat Completions dialect, the Qwen3 chat
  format, and the connection half of a provider streaming server-sent events;
- `ferrule_kit.models.tool_choice` and `ferrule_kit.models.control_text`: what local
  backends need to honour ``tool_choice`` and to keep request text from becoming control
  tokens.
"""
