from ferrule import Runtime
rt = Runtime()
rt.define("tvm_language_model", "lm0", {"model": "Qwen/Qwen3-0.6B"})
for resp in rt.call_iter_method(
    "lm0", "infer", {"messages": [{"role": "user", "content": [{"type": "text", "text": "What's your name?"}]}]}
):
    print(resp)
rt.delete("lm0")
rt.stop()
