"""A tool call waits for the user's confirmation (cookbook: human_in_the_loop/confirmation)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.tools import tool

deleted: list[str] = []


@tool(requires_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    deleted.append(path)
    return f"deleted {path}"


agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[delete_file])

run_response = agent.run("Delete old.log")
paused = run_response.is_paused
waiting = [r.tool_call.name for r in run_response.tools_requiring_confirmation]
for requirement in run_response.active_requirements:
    if requirement.needs_confirmation:
        requirement.confirm()

run_response = agent.continue_run(
    run_id=run_response.run_id, requirements=run_response.requirements
)
print(run_response.content)
