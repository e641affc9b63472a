from ferrule import Runtime
rt = Runtime()
