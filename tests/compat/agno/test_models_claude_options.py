"""Claude's system prompt blocks and trailing user message on Anthropic's wire (the loopback
`wire`: conftest, which refuses what Anthropic refuses: a prefill to Claude 4.6 and later,
badly ordered or too many cache marks)."""

from __future__ import annotations

import pytest
from ferrule.agent import Agent
from ferrule.models.anthropic import Claude, SystemPromptBlock
from ferrule_kernel import InvalidInputError


def test_system_prompt_blocks_each_cached_or_not(wire, program):
    wire.says("One line.", "Another line.")
    scope = program("claude_prompt_caching_dynamic_block")
    assert scope["requests_made"] == [1, 2]  # the function runs for each request
    first, second = wire.bodies
    assert first["system"] == [
        {
            "type": "text",
            "text": "You are an expert software architect.\n\nAnswer in two to four paragraphs.",
            "cache_control": {"type": "ephemeral", "ttl": "1h"},  # cache_system_prompt, 1h
        },
        {
            "type": "text",
            "text": "A stable house style: answer in one line.",
            "cache_control": {"type": "ephemeral", "ttl": "1h"},  # its own ttl
        },
        {"type": "text", "text": "Request number 1."},  # cache=False: never marked
    ]
    assert second["system"][:2] == first["system"][:2]  # the cached prefix is the same
    assert second["system"][2] == {"type": "text", "text": "Request number 2."}
    # The marks stand for cache_system_prompt: no whole-prompt cache besides them.
    assert "cache_control" not in first
    assert scope["second"].content == "Another line."


def test_blocks_without_cache_system_prompt_leave_the_agents_block_unmarked(wire):
    wire.says("ok")
    blocks = [SystemPromptBlock(text="Cached on its own.")]
    model = Claude(id="claude-sonnet-4-5-20250929", system_prompt_blocks=blocks)
    Agent(model=model, instructions=["Be brief."]).run("hi")
    assert wire.last["system"] == [
        {"type": "text", "text": "Be brief."},
        {
            "type": "text",
            "text": "Cached on its own.",
            "cache_control": {"type": "ephemeral", "ttl": "5m"},
        },
    ]


def test_a_1h_block_after_a_5m_one_is_refused_before_sending(wire):
    model = Claude(
        id="claude-sonnet-4-5-20250929",
        cache_system_prompt=True,  # the agent's block at 5m...
        system_prompt_blocks=[SystemPromptBlock(text="later", ttl="1h")],  # ...then 1h
    )
    with pytest.raises(InvalidInputError) as error:
        Agent(model=model, instructions=["Be brief."]).run("hi")
    assert "1h" in str(error.value)
    assert wire.requests == []


@pytest.mark.parametrize(
    ("blocks", "field"),
    [
        ("You are terse.", "system_prompt_blocks"),
        ([{"text": "a dict"}], "system_prompt_blocks[0]"),
    ],
)
def test_bad_system_prompt_blocks_name_the_field(blocks, field):
    with pytest.raises(InvalidInputError) as error:
        Claude(system_prompt_blocks=blocks)
    assert error.value.errors[0]["path"].endswith(field)


def test_a_function_answering_bad_blocks_fails_its_run_naming_the_field(wire):
    model = Claude(system_prompt_blocks=lambda: ["not a block"])
    with pytest.raises(InvalidInputError) as error:
        Agent(model=model).run("hi")
    assert error.value.errors[0]["path"].endswith("system_prompt_blocks[0]")
    assert wire.requests == []


def test_system_prompt_block_checks_its_fields():
    with pytest.raises(ValueError, match="ttl"):
        SystemPromptBlock(text="x", ttl="2h")
    with pytest.raises(TypeError, match="cache"):
        SystemPromptBlock(text="x", cache="yes")


def test_trailing_user_message(wire, program):
    wire.says("42.", "42!")
    scope = program("claude_append_trailing_user_message")
    assert scope["default_model"].append_trailing_user_message is True  # 4.6: on by default
    assert scope["custom_model"].append_trailing_user_message is True
    default, custom = wire.bodies
    assert default["messages"][-2:] == [
        {"role": "assistant", "content": [{"type": "text", "text": "Let me add them up."}]},
        {"role": "user", "content": [{"type": "text", "text": "continue"}]},
    ]
    assert custom["messages"][-1] == {"role": "user", "content": [{"type": "text", "text": "."}]}
    assert scope["run"].content == "42."


def test_models_that_take_a_prefill_get_the_conversation_as_it_is(wire):
    wire.says("42.")
    model = Claude(id="claude-sonnet-4-5-20250929")
    assert model.append_trailing_user_message is False
    Agent(model=model).run(
        [{"role": "user", "content": "15 + 27?"}, {"role": "assistant", "content": "It is"}]
    )
    assert wire.last["messages"][-1]["role"] == "assistant"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"append_trailing_user_message": "yes"}, "append_trailing_user_message"),
        ({"trailing_user_message_content": ""}, "trailing_user_message_content"),
    ],
)
def test_bad_trailing_settings_name_the_field(params, field):
    with pytest.raises(InvalidInputError) as error:
        Claude(**params)
    assert error.value.errors[0]["path"].endswith(field)
