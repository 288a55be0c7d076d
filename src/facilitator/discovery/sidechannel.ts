import { Elysia } from 'elysia';
import { encodeBase64Json } from 'skill-market/x402';
import type { Outcomes } from './service';

/** The x402 sidechannel header of extension outcomes (base64 JSON keyed by extension), for the resource server only. */
const EXTENSION_RESPONSES_HEADER = 'extension-responses';

/**
 * Adds `EXTENSION-RESPONSES: base64({"bazaar": {status, rejectedReason?}})` to a `/verify` or
 * `/settle` answer whose payment declared a bazaar resource: whether it was catalogued or why not.
 * Mounted before the routes it serves.
 */
export function extensionResponses(outcomes: Outcomes) {
  return new Elysia({ name: 'extension-responses' }).onAfterHandle({ as: 'global' }, ({ body, set }) => {
    if (typeof body !== 'object' || body === null) return;
    const outcome = outcomes.get(body);
    if (outcome) set.headers[EXTENSION_RESPONSES_HEADER] = encodeBase64Json({ bazaar: outcome });
  });
}
