agent.delete()
