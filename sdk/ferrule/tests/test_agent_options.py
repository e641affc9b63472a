"""The Agent's options as data (`ferrule.agent.settings`): one frozen group per concern,
and everything that must follow a group's fields does. A new option is one field in one
group (plus its behaviour): these tests name the line still missing elsewhere (the
group's TypedDict in `_typing` for type checkers, its attribute in
`attributes.AgentAttributes`)."""

from __future__ import annotations

import inspect

import attrs
import pytest
from ferrule import Agent, Runtime
from ferrule.agent import MemoryManager, _typing
from ferrule.agent.attributes import AgentAttributes
from ferrule.agent.settings import (
    GROUPS,
    OPTION_GROUPS,
    POSITIONAL,
    AgentSettings,
    HistorySettings,
    MemorySettings,
)
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel

#: Options the overloads spell as parameters rather than in a TypedDict.
SPELLED = {"system_message", "output_schema"}


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def _typed_dict(group: type) -> type:
    return getattr(_typing, group.__name__.replace("Settings", "Options"))


@pytest.mark.parametrize("group", list(GROUPS.values()), ids=lambda g: g.__name__)
def test_each_group_has_its_typeddict_with_the_same_names_and_types(group):
    """`IdentitySettings` <-> `_typing.IdentityOptions`: what mypy sees of ``Agent(...)``'s
    keywords is what the group takes."""
    fields = {f.name: f.type for f in attrs.fields(group) if f.name not in SPELLED}
    typed = _typed_dict(group)
    hints = {
        name: getattr(hint, "__forward_arg__", hint) for name, hint in typed.__annotations__.items()
    }
    body = "\n".join(f"    {name}: {hint}" for name, hint in fields.items())
    assert hints == fields, (
        f"_typing.{typed.__name__} must list {group.__name__}'s fields, as:\n{body}"
    )
    assert set(typed.__annotations__) <= set(_typing.AgentOptions.__annotations__)


def test_agent_options_are_exactly_the_groups():
    assert set(_typing.AgentOptions.__annotations__) == set(OPTION_GROUPS) - SPELLED


def test_every_option_is_an_annotated_attribute_of_the_agent():
    hints = AgentAttributes.__annotations__
    missing = [name for name in OPTION_GROUPS if name not in hints]
    assert not missing, f"declare these in attributes.AgentAttributes: {missing}"
    assert AgentAttributes in Agent.__mro__


def test_the_keyword_signature_is_made_from_the_groups():
    parameters = inspect.signature(Agent.__init__).parameters
    keywords = [n for n, p in parameters.items() if p.kind is p.KEYWORD_ONLY]
    assert keywords == [name for name in OPTION_GROUPS if name not in POSITIONAL]
    assert list(parameters)[:5] == ["self", *POSITIONAL]
    for name in keywords:
        field = attrs.fields_dict(GROUPS[OPTION_GROUPS[name]])[name]
        assert (parameters[name].default, parameters[name].annotation) == (
            field.default,
            field.type,
        )


def test_groups_are_frozen():
    settings = AgentSettings.from_options({"tool_call_limit": 3})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        settings.tools.tool_call_limit = 4  # type: ignore[misc]
    assert settings.tools.tool_call_limit == 3
    assert settings.options()["tool_call_limit"] == 3


def test_an_unknown_keyword_is_a_type_error_naming_the_nearest_option(rt):
    with pytest.raises(TypeError, match=r"'markdwn'; did you mean 'markdown'\?"):
        Agent(rt, TestModel(), markdwn=True)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"'colour'$"):
        Agent(rt, TestModel(), colour="blue")  # type: ignore[call-overload]


def test_a_bad_value_is_refused_in_its_group_naming_it():
    """(every option's check, through `Agent`: test_agent.py's
    test_a_bad_option_is_refused_naming_it)"""
    with pytest.raises(InvalidInputError) as caught:
        AgentSettings.from_options({"timezone_identifier": "Mars/Olympus"})
    assert caught.value.errors[0]["path"] == "timezone_identifier"


def test_options_that_follow_another_are_resolved_in_their_group():
    assert HistorySettings(enable_session_summaries=True).add_session_summary_to_context
    assert not HistorySettings(
        enable_session_summaries=True, add_session_summary_to_context=False
    ).add_session_summary_to_context
    memory = MemorySettings(update_memory_on_run=True)
    assert memory.enable_user_memories and memory.add_memories_to_context
    assert isinstance(memory.memory_manager, MemoryManager)
    assert MemorySettings().memory_manager is None


def test_a_rule_across_groups_is_checked_once_the_groups_are_built():
    with pytest.raises(InvalidInputError) as caught:
        AgentSettings.from_options({"enable_user_memories": True})
    assert caught.value.errors[0]["path"] == "db"


def test_the_agent_reads_its_options_from_the_groups(rt):
    with Agent(
        rt, TestModel(), "Be brief.", name="Helper", markdown=True, tool_timeout=None
    ) as agent:
        assert (agent.system_message, agent.name, agent.id) == ("Be brief.", "Helper", "helper")
        assert (agent.markdown, agent.tool_timeout) == (True, None)
        assert agent.settings.context.system_message == "Be brief."
        assert agent.settings.tools.tool_timeout is None
        assert agent.options == {} and agent.pre_hooks == []


def test_positional_arguments_follow_the_form(rt, langmodel):
    """Ailoy 0.2's form takes ``lm, tools, knowledge`` by position, the others ``runtime,
    model, system_message, tools``; too many, or one given twice, is Python's TypeError."""
    lm = langmodel(rt, TestModel())
    with pytest.raises(TypeError, match=r"at most 3 positional arguments \(lm, tools, knowledge\)"):
        Agent(lm, [], None, "extra")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="at most 4 positional arguments"):
        Agent(rt, TestModel(), "Be brief.", [], "extra")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="multiple values for argument 'tools'"):
        Agent(lm, [], tools=[])  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="multiple values for argument 'model'"):
        Agent(rt, TestModel(), model=TestModel())  # type: ignore[call-overload]
    with Agent(lm, system_message="Be brief.") as agent:
        assert agent.system_message == "Be brief." and agent.model is lm
