/**
 * A guard run over JSON text before `JSON.parse`, in one pass over the characters: how deep the
 * arrays and objects nest, and whether a string holds a NUL (`\u0000`) or an unpaired surrogate
 * escape (`\ud800` alone: JavaScript keeps it, UTF-8 and jsonb cannot). Deeply nested input is
 * cheap to send and expensive to handle (validators and serializers recurse: 5,000 levels
 * overflowed the stack, 20,000 blocked the event loop for seconds), and nothing we accept needs
 * more than a few dozen levels. PostgreSQL refuses NUL in text and jsonb, and lone surrogates in
 * jsonb, so a server that stores what it parses wants to know before it writes.
 *
 * Used by the registry and facilitator (request bodies), the skill server (call bodies) and the
 * x402 codec (payment headers).
 */

/**
 * Deeper than any request we serve; JSON Schemas in skill listings stay well inside it.
 *
 * @example
 * scanJson('['.repeat(MAX_JSON_DEPTH + 1)); // { type: 'too-deep', limit: 64 }
 */
export const MAX_JSON_DEPTH = 64;

/** What {@link scanJson} found: nesting within the limit (and whether a NUL or a lone surrogate occurs), or too deep. */
export type JsonScan = { type: 'ok'; nul: boolean; loneSurrogate: boolean } | { type: 'too-deep'; limit: number };

/**
 * Scans `text` (which need not be valid JSON): stops at the first level beyond `maxDepth`.
 *
 * @example
 * scanJson('{"a":[1,2]}'); // { type: 'ok', nul: false, loneSurrogate: false }
 * scanJson('[[[1]]]', 2); // { type: 'too-deep', limit: 2 }
 */
export function scanJson(text: string, maxDepth: number = MAX_JSON_DEPTH): JsonScan {
  let depth = 0;
  let inString = false;
  let nul = false;
  let loneSurrogate = false;
  /** Set right after a `\uD800`–`\uDBFF` escape: the next character must be a low-surrogate escape. */
  let highPending = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) {
        if (text.charCodeAt(i + 1) === 0x75 /* u */) {
          const unit = parseInt(text.slice(i + 2, i + 6), 16);
          // `\u0000` is the only way a NUL can sit in valid JSON text (raw control characters are refused by JSON.parse).
          if (unit === 0) nul = true;
          const low = unit >= 0xdc00 && unit <= 0xdfff;
          if (highPending !== low) loneSurrogate = true;
          highPending = unit >= 0xd800 && unit <= 0xdbff;
          i += 5;
          continue;
        }
        i++; // the escaped character cannot end the string
      } else if (c === 0x22 /* " */) {
        inString = false;
      } else if (c === 0) {
        nul = true;
      }
      if (highPending) loneSurrogate = true;
      highPending = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return { type: 'too-deep', limit: maxDepth };
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return { type: 'ok', nul, loneSurrogate: loneSurrogate || highPending };
}

/**
 * `JSON.parse` behind the depth guard: `too-deep` without parsing when nesting exceeds
 * `maxDepth`, `invalid` when the text is not JSON. `nul` and `loneSurrogate` tell what the strings hold.
 *
 * @example
 * import { parseGuardedJson, readLimited } from 'skill-market/http';
 *
 * const parsed = parseGuardedJson((await readLimited(request.body, 64 * 1024)) ?? '');
 * if (parsed.type !== 'json') return Response.json({ error: parsed.message }, { status: 400 });
 * if (parsed.nul) return Response.json({ error: 'strings must not contain NUL' }, { status: 400 });
 */
export function parseGuardedJson(
  text: string,
  maxDepth: number = MAX_JSON_DEPTH,
):
  | { type: 'json'; value: unknown; nul: boolean; loneSurrogate: boolean }
  | { type: 'too-deep'; message: string }
  | { type: 'invalid'; message: string } {
  const scan = scanJson(text, maxDepth);
  if (scan.type === 'too-deep') return { type: 'too-deep', message: `JSON nested deeper than ${maxDepth} levels` };
  try {
    return { type: 'json', value: JSON.parse(text) as unknown, nul: scan.nul, loneSurrogate: scan.loneSurrogate };
  } catch (error) {
    return { type: 'invalid', message: error instanceof Error ? error.message : 'not JSON' };
  }
}
