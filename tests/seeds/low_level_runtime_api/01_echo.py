from ferrule import Runtime
rt = Runtime()
result = rt.call("echo", {"text": "Hello world"})
print(result)
rt.stop()
