"""A support agent that never sees card numbers: personal data is masked before the model
reads the message (our own program: PIIDetectionGuardrail from ferrule.guardrails)."""

from ferrule.agent import Agent
from ferrule.guardrails import PIIDetectionGuardrail, PromptInjectionGuardrail
from ferrule.models.openai import OpenAIChat

agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    pre_hooks=[PromptInjectionGuardrail(), PIIDetectionGuardrail(mask_pii=True)],
)
run = agent.run("My card 4111 1111 1111 1111 was charged twice, please help.")
print(run.content)
