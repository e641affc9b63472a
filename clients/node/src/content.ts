/**
 * Content parts for multi-modal queries, in the wire shapes of ferrule's content-type
 * plugins (ferrule-image, ferrule-audio), which are OpenAI's:
 * `{type: "image_url", image_url: {url}}` (a public URL or a base64 `data:` URL) and
 * `{type: "input_audio", input_audio: {data, format}}`.
 */

import { InvalidInputError } from "./errors.js";

export interface ImagePart {
  type: "image_url";
  image_url: { url: string };
}

export interface AudioPart {
  type: "input_audio";
  input_audio: { data: string; format: string };
}

export interface TextPart {
  type: "text";
  text: string;
}

export type ContentPart = TextPart | ImagePart | AudioPart;

/** The image formats providers accept, by their first bytes. */
function sniffImage(data: Uint8Array): string | undefined {
  const starts = (...bytes: number[]) => bytes.every((b, i) => data[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && String.fromCharCode(...data.subarray(8, 12)) === "WEBP") {
    return "image/webp";
  }
  return undefined;
}

/** What `sharp` gives (duck-typed: this package does not depend on sharp). */
interface SharpLike {
  png(): { toBuffer(): Promise<Uint8Array> };
}

export function isSharpImage(value: unknown): value is SharpLike {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { png?: unknown }).png === "function" &&
    typeof (value as { toBuffer?: unknown }).toBuffer === "function"
  );
}

/** Ailoy 0.1's text part: `new TextContent("text", "Hello")` (a `TextPart`). */
export class TextContent implements TextPart {
  readonly type = "text" as const;
  text: string;

  constructor(type: "text", text: string) {
    if (type !== "text") throw InvalidInputError.forField('a TextContent\'s type is "text"', "type");
    if (typeof text !== "string") throw InvalidInputError.forField("must be a string", "text");
    this.text = text;
  }
}

/** An image part (`{type: "image_url", image_url: {url}}`): `ImageContent.fromUrl(url)`, `fromBytes`, `fromSharp`. */
export class ImageContent implements ImagePart {
  readonly type = "image_url" as const;
  image_url: { url: string };

  constructor(type: "image_url", image_url: { url: string }) {
    if (type !== "image_url") throw InvalidInputError.forField('an ImageContent\'s type is "image_url"', "type");
    if (typeof image_url?.url !== "string") throw InvalidInputError.forField("must be a string", "image_url.url");
    this.image_url = { url: image_url.url };
  }

  /** An image at a public http(s) URL (the provider fetches it; not every provider can). */
  static fromUrl(url: string): ImageContent {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !["http:", "https:"].includes(parsed.protocol)) {
      throw InvalidInputError.forField(
        `not a public http(s) URL: ${JSON.stringify(String(url).slice(0, 100))}; use fromBytes for local images`,
        "url",
      );
    }
    return new ImageContent("image_url", { url });
  }

  /** Image bytes (PNG, JPEG, WEBP or GIF); the type is read from them. */
  static fromBytes(data: Uint8Array, mimeType?: string): ImageContent {
    if (!(data instanceof Uint8Array) || data.length === 0) {
      throw InvalidInputError.forField("expected non-empty image bytes", "data");
    }
    const sniffed = sniffImage(data);
    if (sniffed === undefined) {
      throw InvalidInputError.forField("unrecognised image format; use PNG, JPEG, WEBP or GIF", "data");
    }
    if (mimeType !== undefined && mimeType.toLowerCase() !== sniffed) {
      throw InvalidInputError.forField(`mimeType says ${mimeType} but the bytes are ${sniffed}`, "mime_type");
    }
    const base64 = Buffer.from(data).toString("base64");
    return new ImageContent("image_url", { url: `data:${sniffed};base64,${base64}` });
  }

  /** A `sharp` image, as PNG. Needs sharp installed by you; this package does not depend on it. */
  static async fromSharp(image: unknown): Promise<ImageContent> {
    if (!isSharpImage(image)) {
      throw InvalidInputError.forField("expected a sharp image (sharp(...))", "image");
    }
    return ImageContent.fromBytes(await image.png().toBuffer(), "image/png");
  }
}

/** An audio part (`{type: "input_audio", input_audio: {data, format}}`): `AudioContent.fromBytes(data, format)`. */
export class AudioContent implements AudioPart {
  readonly type = "input_audio" as const;
  input_audio: { data: string; format: string };

  constructor(type: "input_audio", input_audio: { data: string; format: string }) {
    if (type !== "input_audio") throw InvalidInputError.forField('an AudioContent\'s type is "input_audio"', "type");
    if (typeof input_audio?.data !== "string") throw InvalidInputError.forField("must be base64 text", "input_audio.data");
    if (typeof input_audio.format !== "string" || !input_audio.format) {
      throw InvalidInputError.forField("name the audio format (\"wav\", \"mp3\", ...)", "input_audio.format");
    }
    this.input_audio = { data: input_audio.data, format: input_audio.format.toLowerCase() };
  }

  /** Audio bytes in `format` (`"wav"`, `"mp3"`, ...). */
  static async fromBytes(data: Uint8Array, format: string): Promise<AudioContent> {
    if (!(data instanceof Uint8Array) || data.length === 0) {
      throw InvalidInputError.forField("expected non-empty audio bytes", "data");
    }
    if (typeof format !== "string" || !format) {
      throw InvalidInputError.forField("name the audio format (\"wav\", \"mp3\", ...)", "format");
    }
    return new AudioContent("input_audio", { data: Buffer.from(data).toString("base64"), format });
  }
}
