/**
 * One proof, one run. Every authorization (network, token, payer, nonce) is claimed here before
 * the facilitator is asked, so concurrent copies of a proof never reach the handler twice; the
 * answer of the one run is kept until the authorization expires, so a client retrying after a
 * lost response gets that answer again instead of paying twice. A call whose settlement outcome is
 * not known yet (the facilitator vanished mid-settle, or the transaction was not seen in time) is
 * held: its result stays here, never evicted, until the outcome is found and the call completed.
 * Requests may wait here for a call's final answer (`outcome`), so a copy of a proof in progress
 * or a call whose payment is still open is answered with the result instead of "retry later".
 * Memory is bounded by entry count and stored bytes; the oldest finished entries go first.
 */
import type { StoredResponse } from '../../http';

/** Outcome of claiming a proof. */
type ClaimResult =
  /** Nobody has used this authorization: go ahead, then `complete` or `release`. */
  | { type: 'claimed' }
  /** The same authorization is being processed by another request right now. */
  | { type: 'busy' }
  /** This exact call ran; its result is held until the settlement's outcome is known. */
  | { type: 'pending' }
  /** This exact call (same proof, skill and input) already ran: here is its answer. */
  | { type: 'replay'; response: StoredResponse }
  /** The authorization was already used (for another call, or its answer is no longer kept). */
  | { type: 'used' }
  /** Too many proofs are in flight to take one more. */
  | { type: 'full' };

/** Bounds of a skill server's memory of used payment proofs (`serve({ replay })`). */
export interface LedgerOptions {
  /** Most authorizations remembered at once; default 10 000. */
  maxEntries?: number;
  /** Most bytes of stored answers; default 32 MiB. */
  maxBytes?: number;
  /** How long past `validBefore` an entry is kept, ms; default 60 000. */
  graceMs?: number;
  /** How long a held call's final answer is kept after its outcome is found, at least; default 5 minutes. */
  resolvedRetentionMs?: number;
  /** Longest an entry is kept at all, ms; default 15 minutes. */
  maxRetentionMs?: number;
  /** Clock in ms; default Date.now. */
  now?: () => number;
}

interface Entry {
  fingerprint: string;
  /** running: in the handler or settling; held: result kept, settlement outcome unknown; done: final answer. */
  state: 'running' | 'held' | 'done';
  expiresAt: number;
  /** The final answer (done), or the result waiting for its settlement (held). */
  response?: StoredResponse;
  bytes: number;
}

export interface ProofLedger {
  /** Claims `key` for the call `fingerprint`; `validBefore` is the authorization's (unix seconds). */
  claim(key: string, fingerprint: string, validBefore: bigint): ClaimResult;
  /** Finishes a claimed (or held) call and keeps its answer for replays. */
  complete(key: string, response: StoredResponse): void;
  /**
   * Keeps the result of a claimed call whose settlement outcome is unknown; retries of the same
   * call are answered `pending` until {@link complete} gives the final answer. Held entries are
   * never evicted nor expired (whoever holds one must complete it).
   */
  hold(key: string, result: StoredResponse): void;
  /** The result kept for a held call. */
  held(key: string): StoredResponse | undefined;
  /** Forgets a claim whose payment was never accepted (the proof may be presented again). */
  release(key: string): void;
  /**
   * The final answer of the call under `key` once {@link complete} gives it; undefined when the
   * claim is released, when no call is kept under `key`, or after `timeoutMs`. At once for a
   * finished call.
   */
  outcome(key: string, timeoutMs: number): Promise<StoredResponse | undefined>;
  /** Entries held (for tests and metrics). */
  size(): number;
  /** Bytes of stored answers. */
  storedBytes(): number;
}

export function createProofLedger(options: LedgerOptions = {}): ProofLedger {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  const graceMs = options.graceMs ?? 60_000;
  const maxRetentionMs = options.maxRetentionMs ?? 15 * 60_000;
  const resolvedRetentionMs = options.resolvedRetentionMs ?? 5 * 60_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  /** Requests waiting for the final answer of a running or held call. */
  const waiters = new Map<string, Set<(response: StoredResponse | undefined) => void>>();
  let bytes = 0;
  let lastSweep = 0;

  const drop = (key: string, entry: Entry) => {
    bytes -= entry.bytes;
    entries.delete(key);
  };
  const forgetBody = (entry: Entry) => {
    bytes -= entry.bytes;
    entry.bytes = 0;
    delete entry.response;
  };
  const sweep = (at: number) => {
    if (at - lastSweep < 1000 && entries.size < maxEntries) return;
    lastSweep = at;
    for (const [key, entry] of entries) if (entry.state === 'done' && entry.expiresAt <= at) drop(key, entry);
  };
  /** Frees room by dropping the oldest finished entries (Map order is insertion order). */
  const makeRoom = () => {
    for (const [key, entry] of entries) {
      if (entries.size < maxEntries) return;
      if (entry.state === 'done') drop(key, entry);
    }
  };
  const keep = (entry: Entry, response: StoredResponse, size: number) => {
    for (const other of entries.values()) {
      if (bytes + size <= maxBytes) break;
      if (other.state === 'done' && other.response) forgetBody(other);
    }
    entry.response = response;
    entry.bytes = size;
    bytes += size;
  };
  const sizeOf = (response: StoredResponse) => response.body.length * 2 + 512;
  const notify = (key: string, response: StoredResponse | undefined) => {
    const waiting = waiters.get(key);
    if (!waiting) return;
    waiters.delete(key);
    for (const resolve of waiting) resolve(response);
  };

  return {
    claim(key, fingerprint, validBefore) {
      const at = now();
      sweep(at);
      const existing = entries.get(key);
      if (existing && (existing.state !== 'done' || existing.expiresAt > at)) {
        if (existing.state === 'running') return { type: 'busy' };
        if (existing.fingerprint !== fingerprint) return { type: 'used' };
        if (existing.state === 'held') return { type: 'pending' };
        return existing.response ? { type: 'replay', response: existing.response } : { type: 'used' };
      }
      if (existing) drop(key, existing);
      if (entries.size >= maxEntries) makeRoom();
      if (entries.size >= maxEntries) return { type: 'full' };
      const validUntil = Number(validBefore > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : validBefore) * 1000;
      const expiresAt = Math.min(Math.max(validUntil, at) + graceMs, at + maxRetentionMs);
      entries.set(key, { fingerprint, state: 'running', expiresAt, bytes: 0 });
      return { type: 'claimed' };
    },
    complete(key, response) {
      const entry = entries.get(key);
      if (!entry || entry.state === 'done') return;
      const wasHeld = entry.state === 'held';
      if (wasHeld) {
        // Found out late: keep the answer long enough for the retries that are waiting for it.
        entry.expiresAt = Math.max(entry.expiresAt, now() + resolvedRetentionMs);
        forgetBody(entry);
      }
      entry.state = 'done';
      notify(key, response);
      const size = sizeOf(response);
      // Too big to keep: a replay is then refused as `used`. Not so for a held call's answer: a
      // retry is waiting for it, and it may be paid for.
      if (size > maxBytes / 4 && !wasHeld) return;
      keep(entry, response, size);
    },
    hold(key, result) {
      const entry = entries.get(key);
      if (entry?.state !== 'running') return;
      entry.state = 'held';
      keep(entry, result, sizeOf(result)); // always kept: it may be paid for
    },
    held(key) {
      const entry = entries.get(key);
      return entry?.state === 'held' ? entry.response : undefined;
    },
    release(key) {
      const entry = entries.get(key);
      if (entry?.state !== 'running') return;
      drop(key, entry);
      notify(key, undefined);
    },
    outcome(key, timeoutMs) {
      const entry = entries.get(key);
      if (!entry || entry.state === 'done') return Promise.resolve(entry?.response);
      if (timeoutMs <= 0) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const waiting = waiters.get(key) ?? new Set();
        waiters.set(key, waiting);
        const done = (response: StoredResponse | undefined) => {
          clearTimeout(timer);
          resolve(response);
        };
        const timer = setTimeout(() => {
          waiting.delete(done);
          if (waiting.size === 0 && waiters.get(key) === waiting) waiters.delete(key);
          resolve(undefined);
        }, timeoutMs);
        waiting.add(done);
      });
    },
    size: () => entries.size,
    storedBytes: () => bytes,
  };
}
