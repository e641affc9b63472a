from ferrule import ImageContent
# Image from public URL
for resp in agent.query([
    "What is in this image?",
    ImageContent.from_url("https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg"),
]):
    agent.print(resp)
# Image from Pillow
from PIL import Image
image = Image.open("path/to/image.png")
for resp in agent.query([
    "What is in this image?",
    # You can provide image as-is, or via ImageContent.from_pillow()
    image,
    # ImageContent.from_pillow(image),
]):
    agent.print(resp)
