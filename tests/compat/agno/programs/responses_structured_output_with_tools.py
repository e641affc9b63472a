"""A tool, then a structured reply (cookbook:
models/openai/responses/structured_output_with_tools)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses
from pydantic import BaseModel


class StockReport(BaseModel):
    symbol: str
    price: float
    verdict: str


def get_stock_price(symbol: str) -> float:
    """Get the current price of a stock.

    Args:
        symbol: The stock's ticker symbol.
    """
    return {"NVDA": 181.5}.get(symbol, 0.0)


agent = Agent(
    model=OpenAIResponses(id="gpt-4o"),
    tools=[get_stock_price],
    output_schema=StockReport,
)

report = agent.run("Write a short report on NVDA").content
print(report)
