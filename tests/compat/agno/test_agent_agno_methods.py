"""Agno's smaller Agent methods on ferrule's Agent: ``set_id``, ``initialize_agent`` and
``scrub_run_output_for_storage`` (a real run's `RunOutput` cut as the agent's
``store_media`` / ``store_tool_messages`` say; OpenAI's wire on the loopback server,
`wire`: conftest)."""

from __future__ import annotations

import io

from ferrule.agent import Agent
from ferrule.media import Image
from ferrule.models.openai import OpenAIChat
from ferrule.tools import tool
from PIL import Image as PillowImage


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    PillowImage.new("RGB", (4, 3), (20, 200, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


@tool
def count_pixels(width: int, height: int) -> int:
    """The number of pixels of an image."""
    return width * height


def test_set_id_and_initialize_agent(wire):
    agent = Agent(model=OpenAIChat(id="gpt-4o"), name="Image Counter")
    given = agent.id
    agent.set_id()
    assert agent.id == given  # an agent with an id keeps it
    agent.id = ""
    agent.set_id()
    assert agent.id == "image-counter"  # from the name, as its first one was
    assert agent.debug_mode is False
    agent.initialize_agent(debug_mode=True)
    assert agent.debug_mode is True
    agent.delete()


def test_scrub_run_output_keeps_what_the_agent_stores(wire):
    wire.calls("count_pixels", width=4, height=3)
    wire.says("It has 12 pixels.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        tools=[count_pixels],
        store_media=False,
        store_tool_messages=False,
    )
    output = agent.run("How many pixels?", images=[Image(content=png_bytes())])
    agent.delete()
    assert [m.role for m in output.messages] == ["user", "assistant", "tool", "assistant"]
    assert output.input.images and len(output.messages[0].content) == 2  # text and image
    agent.scrub_run_output_for_storage(output)
    assert [m.role for m in output.messages] == ["user", "assistant"]
    assert output.messages[0].content == "How many pixels?"  # the image is gone
    assert output.messages[1].content == "It has 12 pixels." and not output.messages[1].tool_calls
    assert output.input.images is None and output.content == "It has 12 pixels."


def test_scrub_run_output_leaves_what_the_agent_stores_by_default(wire):
    wire.calls("count_pixels", width=2, height=2)
    wire.says("4.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[count_pixels])
    output = agent.run("Pixels of 2 by 2?")
    agent.delete()
    before = list(output.messages)
    agent.scrub_run_output_for_storage(output)
    assert output.messages == before
