for resp in agent.query("Please give me a short poem about AI"):
    agent.print(resp)
