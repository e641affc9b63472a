"""A function searching in the knowledge's place (cookbook: knowledge/custom_retriever)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run import RunContext

RECIPES = {
    "pad thai": "Pad Thai: rice noodles, tamarind, fish sauce, peanuts.",
    "tom yum": "Tom Yum: lemongrass, galangal, lime leaves, chilli.",
}
asked: list[tuple[str, int | None, str]] = []


def retriever(
    query: str, agent: Agent | None = None, num_documents: int = 5, **kwargs
) -> list[dict] | None:
    run_context: RunContext = kwargs["run_context"]
    asked.append((query, num_documents, run_context.session_id))
    return [{"content": text} for name, text in RECIPES.items() if name in query.lower()]


agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    knowledge_retriever=retriever,
    search_knowledge=True,
    session_id="recipes",
    instructions="Search the knowledge base for information",
)
run = agent.run("How do I make pad thai?")
print(run.content)
