agent = Agent(
    rt,
    APIModel(
        "gpt-4o-audio-preview",
        provider="openai",
        api_key="<OPENAI_API_KEY>"
    )
)
