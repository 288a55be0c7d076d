/**
 * The one paid-call pipeline of the skill server knows no scheme: schemes plug in
 * (sdk/creator/scheme.ts), each in its own folder under sdk/creator/schemes/. A scheme's name in
 * the pipeline's file means a scheme's logic leaked into it.
 */
import { describe, expect, it } from 'bun:test';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '../..');
const SCHEME_WORDS = /\b(exact|batch-settlement|channels?|vouchers?|deposits?|EIP-3009|authorization)\b/gi;

describe('scheme-free pipelines', () => {
  it('sdk/creator/paid-call.ts names no scheme', () => {
    const text = readFileSync(resolve(ROOT, 'sdk/creator/paid-call.ts'), 'utf8');
    expect(text.match(SCHEME_WORDS) ?? []).toEqual([]);
  });
});
