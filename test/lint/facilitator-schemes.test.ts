/**
 * The facilitator's dispatch knows no scheme: its service (and the contract and envelope it
 * dispatches with) name none of them, so a scheme is added or left out in its own folder under
 * src/facilitator/schemes/ and in create.ts only. The import arrows that keep it so are checked
 * by scripts/check-boundaries.ts (test/lint/boundaries.test.ts).
 */
import { describe, expect, it } from 'bun:test';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '../..');
/** Words of the schemes this facilitator settles and of their parts. */
const SCHEME_WORDS = /exact|batch|channel|voucher|deposit|multicall|eip-?3009|transferWithAuthorization/gi;

describe('the facilitator dispatch', () => {
  for (const file of ['service.ts', 'scheme.ts', 'request.ts', 'reasons.ts']) {
    it(`names no scheme in src/facilitator/${file}`, () => {
      const text = readFileSync(resolve(ROOT, 'src/facilitator', file), 'utf8');
      expect(text.match(SCHEME_WORDS)).toBeNull();
    });
  }
});
