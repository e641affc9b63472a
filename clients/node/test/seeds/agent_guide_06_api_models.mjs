import { startRuntime, defineAgent, APIModel } from "ferrule";
const rt = await startRuntime();
// Use OpenAI
const agent = await defineAgent(
rt,
APIModel({ id: "gpt-4o", apiKey: "<OPENAI_API_KEY>" })
);
// Use Gemini
const agent = await defineAgent(
rt,
APIModel({ id: "gemini-2.5-flash", apiKey: "<GEMINI_API_KEY>" })
);
// Use Claude
const agent = await defineAgent(
rt,
APIModel({ id: "claude-sonnet-4-20250514", apiKey: "<CLAUDE_API_KEY>" })
);
// Use Grok
const agent = await defineAgent(
rt,
APIModel({ id: "grok-4", apiKey: "<XAI_API_KEY>" })
);
