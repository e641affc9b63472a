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

export const ImageContent = {
  /** An image at a public http(s) URL (the provider fetches it; not every provider can). */
  fromUrl(url: string): ImagePart {
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
    return { type: "image_url", image_url: { url } };
  },

  /** Image bytes (PNG, JPEG, WEBP or GIF); the type is read from them. */
  fromBytes(data: Uint8Array, mimeType?: string): ImagePart {
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
    return { type: "image_url", image_url: { url: `data:${sniffed};base64,${base64}` } };
  },

  /** A `sharp` image, as PNG. Needs sharp installed by you; this package does not depend on it. */
  async fromSharp(image: unknown): Promise<ImagePart> {
    if (!isSharpImage(image)) {
      throw InvalidInputError.forField("expected a sharp image (sharp(...))", "image");
    }
    return ImageContent.fromBytes(await image.png().toBuffer(), "image/png");
  },
};

export const AudioContent = {
  /** Audio bytes in `format` (`"wav"`, `"mp3"`, ...). */
  async fromBytes(data: Uint8Array, format: string): Promise<AudioPart> {
    if (!(data instanceof Uint8Array) || data.length === 0) {
      throw InvalidInputError.forField("expected non-empty audio bytes", "data");
    }
    if (typeof format !== "string" || !format) {
      throw InvalidInputError.forField("name the audio format (\"wav\", \"mp3\", ...)", "format");
    }
    const base64 = Buffer.from(data).toString("base64");
    return { type: "input_audio", input_audio: { data: base64, format: format.toLowerCase() } };
  },
};
