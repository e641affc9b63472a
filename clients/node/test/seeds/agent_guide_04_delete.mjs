await agent.delete();
