/**
 * The tally seller's memory of its proofs (tally-server.ts): one proof, one run. A proof is claimed
 * before anything is asked of the facilitator; a copy arriving while it runs, or while its payment
 * is open (held), waits for its answer; the answer of a paid call is kept for retries of the same
 * call (same fingerprint: skill, input, signature), and a proof used for another call is `used`.
 * A claim released (nothing was charged) leaves the proof free again. Unbounded: it lives for a test.
 */
interface Entry<A> {
  fingerprint: string;
  state: 'running' | 'held' | 'done';
  answer?: A;
  waiting: Set<(answer: A | undefined) => void>;
}

type Claim<A> =
  /** Go ahead, then `complete`, `hold` or `release`. */
  | { type: 'claimed' }
  /** The same call ran and was paid: its answer. */
  | { type: 'replay'; answer: A }
  /** The proof was used for another call. */
  | { type: 'used' }
  /** A copy is still running, or its payment still open, after the wait. */
  | { type: 'open' };

export function tallyAnswers<A>() {
  const entries = new Map<string, Entry<A>>();

  const finish = (proof: string, answer: A | undefined) => {
    const entry = entries.get(proof);
    if (!entry) return;
    if (answer === undefined) entries.delete(proof);
    else Object.assign(entry, { state: 'done', answer });
    for (const resolve of entry.waiting) resolve(answer);
    entry.waiting.clear();
  };

  /** The answer of the call under `proof` once it has one (undefined when released), or undefined after `ms`. */
  const outcome = (proof: string, ms: number): Promise<A | undefined> => {
    const entry = entries.get(proof);
    if (!entry || entry.state === 'done' || ms <= 0) return Promise.resolve(entry?.answer);
    return new Promise((resolve) => {
      const done = (answer: A | undefined) => {
        clearTimeout(timer);
        resolve(answer);
      };
      const timer = setTimeout(() => {
        entry.waiting.delete(done);
        resolve(undefined);
      }, ms);
      entry.waiting.add(done);
    });
  };

  return {
    /** Claims `proof` for the call `fingerprint`, waiting up to `waitMs` for a copy that runs or is held. */
    async claim(proof: string, fingerprint: string, waitMs: number): Promise<Claim<A>> {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const entry = entries.get(proof);
        if (!entry) {
          entries.set(proof, { fingerprint, state: 'running', waiting: new Set() });
          return { type: 'claimed' };
        }
        if (entry.fingerprint !== fingerprint) return { type: 'used' };
        if (entry.state === 'done' && entry.answer !== undefined) return { type: 'replay', answer: entry.answer };
        const left = deadline - Date.now();
        if (left <= 0) return { type: 'open' };
        await outcome(proof, left);
      }
    },
    /** The call's final answer: kept for its retries, given to those waiting. */
    complete: (proof: string, answer: A) => finish(proof, answer),
    /** The call ran, its payment is open: retries wait for `complete`. */
    hold(proof: string) {
      const entry = entries.get(proof);
      if (entry) entry.state = 'held';
    },
    /** Nothing was charged: the proof is free again. */
    release: (proof: string) => finish(proof, undefined),
    outcome,
  };
}
