"""Tools chosen per run by a factory reading the session state (cookbook: callable tools)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run import RunContext

calls: list[str] = []


def search_web(query: str) -> str:
    """Search the web."""
    calls.append(f"web:{query}")
    return f"web results for {query}"


def search_internal(query: str) -> str:
    """Search the company's documents."""
    calls.append(f"internal:{query}")
    return f"internal results for {query}"


def get_tools(run_context: RunContext) -> list:
    if run_context.session_state.get("role") == "employee":
        return [search_internal]
    return [search_web]


agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    tools=get_tools,
    session_state={"role": "employee"},
)
run = agent.run("Find the holiday policy")
print(run.content)
