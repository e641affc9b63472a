from ferrule import Runtime
rt = Runtime()
with open("what_men_live_by.txt") as f:
    text = f.read()
result = rt.call("split_text", {"text": text})
chunks = result["chunks"]
print(len(chunks)) # == 12
# Print chunks
print("********************** First chunk **********************")
print(chunks[0])
print("*********************************************************")
rt.stop()
