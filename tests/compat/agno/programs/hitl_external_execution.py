"""A tool the caller runs itself (cookbook: human_in_the_loop/external_tool_execution)."""

import subprocess
import sys

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.tools import tool


@tool(external_execution=True)
def execute_shell_command(command: str) -> str:
    """Execute a shell command."""
    raise AssertionError("an external tool is never run by the agent")


agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[execute_shell_command])

run_response = agent.run("What Python version is this?")
paused = run_response.is_paused
for requirement in run_response.active_requirements:
    if requirement.needs_external_execution:
        command = requirement.tool_call.arguments["command"]
        output = subprocess.run(
            [sys.executable, "-c", "import sys; print(sys.version_info[0])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        requirement.set_external_execution_result(output)

run_response = agent.continue_run(
    run_id=run_response.run_id, requirements=run_response.requirements
)
print(run_response.content)
