"""An image, by URL, with the question (cookbook: models/openai/responses/image_agent; the
image given as ferrule's content part, as ferrule has no ``ferrule.media.Image`` yet)."""

from ferrule import Part
from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

agent = Agent(model=OpenAIResponses(id="gpt-4o"), markdown=True)

run = agent.run(
    "Tell me about this image.",
    files=[Part.image_from_url("https://example.com/GoldenGateBridge-001.jpg")],
)
print(run.content)
