"""A conversation that ends with the model's own turn, sent to a Claude that refuses to
continue it (cookbook: models/anthropic/append_trailing_user_message)."""

from ferrule.models.anthropic import Claude
from ferrule.models.message import Message

default_model = Claude(id="claude-sonnet-4-6")
custom_model = Claude(
    id="claude-sonnet-4-5-20250929",
    append_trailing_user_message=True,
    trailing_user_message_content=".",
)

conversation = [
    Message(role="user", content="What is 15 + 27?"),
    Message(role="assistant", content="Let me add them up."),
]
run = default_model.response(messages=conversation)
custom_run = custom_model.response(messages=conversation)
print(run.content, custom_run.content)
