for await (const resp of agent.query("Please give me a short poem about AI")) {
agent.print(resp);
}
