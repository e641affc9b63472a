"""A function tool on Claude (cookbook: models/anthropic/tool_use)."""

from ferrule.agent import Agent
from ferrule.models.anthropic.claude import Claude
from ferrule.tools import tool

orders = {"A-100": "shipped", "B-200": "processing"}
looked_up = []


@tool
def order_status(order_id: str) -> str:
    """Look up an order's status.

    Args:
        order_id: The order's id, e.g. A-100.
    """
    looked_up.append(order_id)
    return orders.get(order_id, "unknown order")


agent = Agent(model=Claude(id="claude-sonnet-4-20250514"), tools=[order_status])
run = agent.run("Where is my order A-100?")
print(run.content)
