"""A toolkit of your own: methods grouped under one name, some left out
(cookbook: tools/custom_tools, a Toolkit subclass)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.tools import Toolkit


class InventoryTools(Toolkit):
    def __init__(self, stock: dict[str, int], **kwargs):
        self.stock = stock
        self.log: list[str] = []
        super().__init__(
            name="inventory_tools",
            tools=[self.check_stock, self.reserve, self.wipe_inventory],
            **kwargs,
        )

    def check_stock(self, item: str) -> int:
        """How many of an item are in stock.

        Args:
            item: The item's name.
        """
        self.log.append(f"check {item}")
        return self.stock.get(item, 0)

    def reserve(self, item: str, quantity: int) -> str:
        """Reserve some of an item.

        Args:
            item: The item's name.
            quantity: How many to reserve.
        """
        self.stock[item] -= quantity
        self.log.append(f"reserve {quantity} {item}")
        return f"reserved {quantity} {item}"

    def wipe_inventory(self) -> str:
        """Delete every item."""
        self.stock.clear()
        return "wiped"


inventory = InventoryTools({"lamp": 5}, exclude_tools=["wipe_inventory"])
agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[inventory])
run = agent.run("Reserve two lamps if we have them.")
print(run.content)
