for resp in agent.query(
    "Please solve me a simultaneous equation: x+y=3, 4x+3y=12",
    reasoning=True
):
    agent.print(resp)
