"""Instructions made per run from the run's context (cookbook: dynamic instructions)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run import RunContext


def get_instructions(run_context: RunContext) -> str:
    if not run_context.session_state:
        run_context.session_state = {}
    user = run_context.session_state.get("current_user_id", "someone")
    return f"Make the story about {user}. The session is {run_context.session_id}."


agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    instructions=get_instructions,
    session_id="story-session",
    session_state={"current_user_id": "john"},
)
run = agent.run("Write a 2 sentence story")
print(run.content)
