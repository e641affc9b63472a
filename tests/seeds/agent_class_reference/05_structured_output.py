from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from pydantic import BaseModel
class MovieReview(BaseModel):
    title: str
    rating: int
    summary: str
agent = Agent(
    name="Reviewer",
    model=OpenAIChat(id="gpt-4"),
    output_schema=MovieReview
)
response = agent.run("Review the movie Inception")
review: MovieReview = response.content
print(f"{review.title}: {review.rating}/10")
