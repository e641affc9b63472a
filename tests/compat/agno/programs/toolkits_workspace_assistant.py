"""An assistant that reads, writes and runs code in one work folder, and may run only the
programs the host lists (our own program: FileTools, ShellTools, PythonTools, CalculatorTools)."""

import tempfile
from pathlib import Path

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.tools.calculator import CalculatorTools
from ferrule.tools.file import FileTools
from ferrule.tools.python import PythonTools
from ferrule.tools.shell import ShellTools

work = Path(tempfile.mkdtemp(prefix="workspace-"))
(work / "orders.csv").write_text("item,qty\nlamp,3\ndesk,1\n")

agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    tools=[
        FileTools(base_dir=work),
        ShellTools(base_dir=work, allowed_commands=["wc", "ls"]),
        PythonTools(base_dir=work, include_tools=["run_python_code"]),
        CalculatorTools(),
    ],
    instructions="Work only with the files in your folder.",
)
run = agent.run("How many items were ordered? Save the total to total.txt.")
print(run.content)
