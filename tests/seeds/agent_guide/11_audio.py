from ferrule import AudioContent
with open("path/to/audio.wav", "rb") as f:
    data = f.read()
for resp in agent.query([
    "What's in these recording?",
    AudioContent.from_bytes(data=data, format="wav"),
]):
    agent.print(resp)
