import { AudioContent } from "ferrule";
import fs from "node:fs";
const buffer = fs.readFileSync("path/to/audio.wav");
for await (const resp of agent.query([
"What's in these recording?",
await AudioContent.fromBytes(buffer, "wav"),
])) {
agent.print(resp);
}
