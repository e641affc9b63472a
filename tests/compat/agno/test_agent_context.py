"""Agno's context keywords of the Agent (`add_datetime_to_context` with
`timezone_identifier`, `add_name_to_context`, `expected_output`, `additional_context`),
checked by what the model receives in the system message (`wire`: conftest); a bad value is
refused naming its keyword."""

from __future__ import annotations

import datetime
import re
import zoneinfo

import pytest
from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule_kernel import InvalidInputError


def system_of(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "system")


def test_datetime_in_named_zone_and_name(wire):
    wire.says("It is morning, says Ada.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        name="Ada",
        add_name_to_context=True,
        add_datetime_to_context=True,
        timezone_identifier="Asia/Tokyo",
        markdown=True,
    )
    before = datetime.datetime.now(zoneinfo.ZoneInfo("Asia/Tokyo"))
    assert agent.run("What time is it?").content == "It is morning, says Ada."
    system = system_of(wire.last)
    block = re.search(r"<additional_information>\n(.*)\n</additional_information>", system, re.S)
    assert block is not None
    lines = block.group(1).split("\n")
    assert lines[0] == "- Use markdown to format your answers."
    assert lines[2] == "- Your name is: Ada."
    stamp = re.fullmatch(r"- The current time is (\S+ \S+) JST\.", lines[1])
    assert stamp is not None
    sent = datetime.datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S")
    # the wall time in Tokyo when the run was made (to the second, within the run's span)
    assert abs(sent - before.replace(tzinfo=None, microsecond=0)) < datetime.timedelta(hours=1)


def test_datetime_format(wire):
    wire.says("It is this year.")
    Agent(
        model=OpenAIChat(id="gpt-4o"),
        add_datetime_to_context=True,
        timezone_identifier="UTC",
        datetime_format="year %Y",
    ).run("Which year is it?")
    year = datetime.datetime.now(datetime.timezone.utc).year
    assert f"- The current time is year {year}." in system_of(wire.last)


def test_name_left_out_unless_asked(wire):
    wire.says("Hello.")
    Agent(model=OpenAIChat(id="gpt-4o"), name="Ada", description="A helper.").run("Hi")
    assert "Ada" not in system_of(wire.last)


def test_expected_output_and_additional_context(wire):
    wire.says("Paris: sunny.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        instructions="Report the weather.",
        expected_output="  One line: the city, a colon, the sky.  ",
        additional_context="<cities>Paris, Lyon</cities>",
    )
    agent.run("Weather in Paris?")
    system = system_of(wire.last)
    expected = "<expected_output>\nOne line: the city, a colon, the sky.\n</expected_output>"
    assert expected in system
    assert system.endswith("<cities>Paris, Lyon</cities>")
    assert system.index("Report the weather.") < system.index(expected)


def test_system_message_given_leaves_context_out(wire):
    wire.says("Ok.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"),
        system_message="Be brief.",
        add_datetime_to_context=True,
        expected_output="One word.",
    )
    agent.run("Hi")
    assert system_of(wire.last) == "Be brief."


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("timezone_identifier", "Mars/Olympus_Mons"),
        ("timezone_identifier", 9),
        ("add_datetime_to_context", "yes"),
        ("datetime_format", 12),
        ("add_name_to_context", 1),
        ("expected_output", ["a list"]),
        ("additional_context", 3.5),
    ],
)
def test_bad_value_refused_naming_keyword(keyword, value):
    with pytest.raises(InvalidInputError) as refused:
        Agent(model=OpenAIChat(id="gpt-4o"), **{keyword: value})
    assert refused.value.details["errors"][0]["path"] == keyword
