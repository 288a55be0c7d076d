/**
 * Which wallets have used up a skill's free trial, as its server said (a 402 to the wallet's
 * sign-in): the pipeline signs no sign-in for them again until the server's `X-Trial-Resets-At`
 * (the end of the trial's period), or for as long as it lives when the server did not say.
 */

/** The server's answer header: when a used-up trial's period ends (ISO 8601). */
const RESETS_AT_HEADER = 'X-Trial-Resets-At';

/**
 * Free trials known to be used up, by skill endpoint and wallet. A {@link PaymentPipeline} keeps
 * its own; pipelines given one instance (`usedTrials`) share it, as a page's successive calls do.
 *
 * @example
 * const usedTrials = new UsedTrials();
 * const pipeline = new PaymentPipeline({ network: 'eip155:8453', usedTrials });
 * // … after a call whose sign-in the server answered with a 402:
 * usedTrials.until(skill.endpoint, address); // ms when the free calls come back; Infinity: not said; undefined: not used up
 */
export class UsedTrials {
  private readonly entries = new Map<string, number>();

  /** `now`: the clock that ends a period (ms), default `Date.now`. */
  constructor(private readonly now: () => number = Date.now) {}

  /**
   * When the trial of `endpoint` comes back for `address` (ms since the epoch; `Infinity` when the
   * server did not say), or undefined while it is not known to be used up.
   *
   * @example usedTrials.until('https://skills.example.com/haiku', '0xAb…') // 1764547200000
   */
  until(endpoint: string, address: string): number | undefined {
    const key = keyOf(endpoint, address);
    const until = this.entries.get(key);
    if (until === undefined) return undefined;
    if (until > this.now()) return until;
    this.entries.delete(key);
    return undefined;
  }

  /**
   * Records that the server refused `address` a free call of `endpoint`, its 402 `answerHeaders`
   * telling until when (`X-Trial-Resets-At`) when they do.
   *
   * @example usedTrials.add(skill.endpoint, address, response.headers)
   */
  add(endpoint: string, address: string, answerHeaders?: Headers): void {
    const said = Date.parse(answerHeaders?.get(RESETS_AT_HEADER) ?? '');
    this.entries.set(keyOf(endpoint, address), Number.isFinite(said) ? said : Number.POSITIVE_INFINITY);
  }
}

const keyOf = (endpoint: string, address: string) => `${endpoint}\n${address.toLowerCase()}`;
