// Preloaded (node --import) by replay_ailoy.mjs into the processes that run Ailoy's files:
// their own fetch() of the public picture and recording they download (the cases that need
// the internet) is answered with small local media of the same kind (media.mjs), so those
// cases run offline; every other fetch() goes out as usual. Each stand-in is announced.
import { redPng, toneWav } from "./media.mjs";

const STAND_INS = {
  "cdn.britannica.com": { body: redPng, type: "image/png" },
  "openaiassets.blob.core.windows.net": { body: toneWav, type: "audio/wav" },
};

const fetchOnline = globalThis.fetch;
globalThis.fetch = async function fetch(input, init) {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  const standIn = Object.hasOwn(STAND_INS, url.hostname) ? STAND_INS[url.hostname] : undefined;
  if (standIn === undefined) return fetchOnline(input, init);
  process.stderr.write(`[replay] fetch(${url.href}) answered offline with a local ${standIn.type}\n`);
  return new Response(standIn.body(), { status: 200, headers: { "content-type": standIn.type } });
};
