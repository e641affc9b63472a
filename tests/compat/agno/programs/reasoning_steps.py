"""Reasoning in steps before answering (our own program: ReasoningManager with a reasoning
agent writing ReasoningSteps)."""

from ferrule.models.message import Message
from ferrule.models.openai import OpenAIChat
from ferrule.reasoning.manager import ReasoningConfig, ReasoningEventType, ReasoningManager

manager = ReasoningManager(ReasoningConfig(reasoning_model=OpenAIChat(id="gpt-4o"), max_steps=4))
messages = [
    Message(
        role="user", content="A train leaves at 9:40 and arrives at 11:05. How long is the trip?"
    )
]
steps = []
for event in manager.reason(messages):
    if event.event_type is ReasoningEventType.step:
        steps.append(event.reasoning_step)
        print(f"{event.reasoning_step.title}: {event.reasoning_step.result}")
