/**
 * The receivers' consent to refunds our receiver authorizer signs: a refund gives a payer back what
 * is left in a channel, less the charge the refund's voucher names, so only the receiver (its
 * server, which knows what it answered) may ask us to sign one. It proves it with a key bound to its
 * address (FACILITATOR_RECEIVER_KEYS), sent as `Authorization: Bearer <key>`. Keys are kept as
 * SHA-256 digests and compared in constant time; they are never logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ReceiverKey } from '../../../config';

export interface ReceiverKeys {
  /** True when `presented` (the bearer token, if any) is a key bound to `receiver`. */
  consents(receiver: string, presented: string | undefined): boolean;
}

const digest = (key: string) => createHash('sha256').update(key).digest();

export function createReceiverKeys(keys: readonly ReceiverKey[]): ReceiverKeys {
  const bound = keys.map(({ receiver, key }) => ({ receiver: receiver.toLowerCase(), hash: digest(key) }));
  return {
    consents(receiver, presented) {
      if (!presented) return false;
      const hash = digest(presented);
      const owner = receiver.toLowerCase();
      // Every bound key is compared, so the time taken says nothing about which (if any) matched.
      let found = false;
      for (const entry of bound) if (timingSafeEqual(entry.hash, hash) && entry.receiver === owner) found = true;
      return found;
    },
  };
}
