// Get the list of messages
const messages = agent.getMessages();
console.log(messages);
// Clear messages
agent.clearMessages();
