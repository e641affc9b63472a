"""A team wiki kept in a folder: an agent adds a page and answers from it (our own program:
WikiContextProvider on a FileSystemBackend)."""

import tempfile

from ferrule.agent import Agent
from ferrule.context.wiki import FileSystemBackend, WikiContextProvider
from ferrule.models.openai import OpenAIChat

wiki = WikiContextProvider(
    backend=FileSystemBackend(tempfile.mkdtemp(prefix="wiki-")),
    model=OpenAIChat(id="gpt-4o"),
)
agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    tools=wiki.get_tools(),
    instructions=wiki.instructions(),
)
agent.run("Note in the wiki that the office closes at five on Fridays.")
run = agent.run("When does the office close on Friday?")
print(run.content)
