# Get the list of messages
messages = agent.get_messages()
print(messages)
# Clear messages
agent.clear_messages()
