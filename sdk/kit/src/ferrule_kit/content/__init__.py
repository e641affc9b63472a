"""What a conversation is made of: messages, their parts and what a provider accepts of them.

- `ferrule_kit.content.messages`: `Message` and its built-in parts (text, reasoning, tool
  calls), with the one cattrs converter for wire shapes;
- `ferrule_kit.content.parts`: the open part-type registry content plugins register into
  (images, audio, documents, ...);
- `ferrule_kit.content.policy`: a provider's `ContentPolicy` and the `Encoding` a content
  plugin's encoder is handed.
"""
