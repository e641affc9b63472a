import { ImageContent } from "ferrule";
import sharp from "sharp";
// Image from public URL
for await (const resp of agent.query([
"What is in this image?",
ImageContent.fromUrl(
"https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg"
),
])) {
agent.print(resp);
}
// Image from Sharp
const image = sharp("path/to/image.png");
for await (const resp of agent.query([
"What is in this image?",
// You can provide image as-is, or via ImageContent.fromSharp()
image,
// await ImageContent.fromSharp(image),
])) {
agent.print(resp);
}
