with Runtime() as rt:
    rt.define("tvm_language_model", "lm0", {"model": "Qwen/Qwen3-8B"})
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "You are a friendly chatbot who always responds in the style of a pirate."}]},
        {"role": "user", "content": [{"type": "text", "text": "Who are you?"}]},
    ]
    for resp in rt.call_iter_method("lm0", "infer", {"messages": messages}):
        print(resp["message"]["content"][0]["text"], end='')
    rt.delete("lm0")
