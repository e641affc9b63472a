with Runtime() as rt:
    rt.define("tvm_language_model", "lm0", {"model": "Qwen/Qwen3-8B"})
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "if a>1, what is the sum of the real solutions of 'sqrt(a-sqrt(a+x))=x'?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Let's think step by step."}]}, # Chain-of-Thought prompt
    ]
    for resp in rt.call_iter_method("lm0", "infer", {"messages": messages}):
        print(resp["message"]["content"][0]["text"], end='')
    rt.delete("lm0")
