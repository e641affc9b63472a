"""print_response, plain then streamed, on the Responses API
(cookbook: models/openai/responses/basic, its sync and sync + streaming calls)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

agent = Agent(model=OpenAIResponses(id="gpt-4o"), markdown=True)

if __name__ == "__main__":
    # --- Sync ---
    agent.print_response("Share a 2 sentence horror story")
    # --- Sync + Streaming ---
    agent.print_response("Share a 2 sentence horror story", stream=True)
