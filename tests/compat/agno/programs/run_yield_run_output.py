"""A streamed run that ends with its RunOutput (cookbook: run_response, yield_run_output)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run.agent import RunOutput

agent = Agent(model=OpenAIChat(id="gpt-4o"))

pieces = []
run_output = None
for event in agent.run("Tell me a joke", stream=True, yield_run_output=True):
    if isinstance(event, RunOutput):
        run_output = event
    elif event.content:
        pieces.append(event.content)

print("".join(pieces))
print(run_output.status, run_output.content)
