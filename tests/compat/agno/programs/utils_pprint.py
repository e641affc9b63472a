"""Pretty-printing a run's response (cookbook: pprint_run_response)."""

from ferrule.agent import Agent, RunOutput
from ferrule.models.openai import OpenAIChat
from ferrule.utils.pprint import pprint_run_response

agent = Agent(model=OpenAIChat(id="gpt-4o"))

run_response: RunOutput = agent.run("Tell me a five word story.")
pprint_run_response(run_response, markdown=True)

stream = agent.run("And another one.", stream=True)
pprint_run_response(stream, markdown=True)
