/**
 * Recognises private-key material so it can be refused before it travels or is stored: a run of
 * exactly 64 hex digits (a raw secp256k1 key, with or without 0x) or 12 or more consecutive
 * BIP-39 English words (a recovery phrase, whatever separates or numbers the words).
 */
import { english } from 'viem/accounts';

const HEX_KEY = /(?<![0-9a-fA-F])[0-9a-fA-F]{64}(?![0-9a-fA-F])/;
const MNEMONIC_MIN_WORDS = 12;
const WORDS = new Set(english);
/** Deeper JSON than this is refused rather than scanned. */
const MAX_DEPTH = 32;

/**
 * What `findPrivateKeyMaterial` answers for JSON nested too deeply to scan.
 *
 * @example
 * if (findPrivateKeyMaterial(body) === TOO_DEEP) return Response.json({ error: 'body nested too deeply' }, { status: 400 });
 */
export const TOO_DEEP = '(too deep)';

/**
 * The one sentence every refusal uses.
 *
 * @example
 * if (looksLikePrivateKey(input.value)) form.error = PRIVATE_KEY_REFUSAL;
 */
export const PRIVATE_KEY_REFUSAL = 'Private keys and recovery phrases must never be sent: send only the wallet address';

/**
 * True when `text` contains something shaped like a private key or a recovery phrase.
 *
 * @example looksLikePrivateKey('0x4c0883a6…') // true for 0x + 64 hex
 */
export function looksLikePrivateKey(text: string): boolean {
  if (HEX_KEY.test(text)) return true;
  let run = 0;
  for (const word of text.toLowerCase().split(/[^a-z]+/)) {
    if (word === '') continue;
    run = WORDS.has(word) ? run + 1 : 0;
    if (run >= MNEMONIC_MIN_WORDS) return true;
  }
  return false;
}

/**
 * The path (`label`, `tags.0`, `params.address`…) of the first string or key in `value` that
 * looks like private-key material, `"(too deep)"` for nesting past 32 levels, or undefined.
 * Never returns the material itself.
 *
 * @example
 * findPrivateKeyMaterial({ address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C', label: 'agent' }); // undefined: an address is fine
 * findPrivateKeyMaterial({ params: { secret: `0x${'ab'.repeat(32)}` } }); // 'params.secret'
 */
export function findPrivateKeyMaterial(value: unknown, root = ''): string | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (looksLikePrivateKey(current)) return path || '(value)';
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= MAX_DEPTH) return TOO_DEEP;
    for (const [key, child] of Object.entries(current)) {
      const childPath = path ? `${path}.${key}` : key;
      if (looksLikePrivateKey(key)) return path || '(key)';
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return undefined;
}
