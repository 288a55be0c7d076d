/**
 * Free trials a server said are used up (its 402 to a wallet's sign-in), by skill endpoint and
 * wallet: until its `X-Trial-Resets-At`, else for as long as this lives. Pipelines given one
 * (`usedTrials`) share it.
 *
 * @example
 * const usedTrials = new UsedTrials();
 * new PaymentPipeline({ network: 'eip155:8453', usedTrials });
 * usedTrials.until(skill.endpoint, address); // ms it comes back (Infinity: not said); undefined: not used up
 */
export class UsedTrials {
  private readonly entries = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** When the trial comes back (ms; Infinity: not said), or undefined while not known to be used up. */
  until(endpoint: string, address: string): number | undefined {
    const key = keyOf(endpoint, address);
    const until = this.entries.get(key);
    if (until !== undefined && until <= this.now()) this.entries.delete(key);
    else return until;
  }

  /** Records a refused sign-in, until the 402's `X-Trial-Resets-At` when it says. */
  add(endpoint: string, address: string, answerHeaders?: Headers): void {
    const said = Date.parse(answerHeaders?.get('X-Trial-Resets-At') ?? '');
    this.entries.set(keyOf(endpoint, address), Number.isFinite(said) ? said : Number.POSITIVE_INFINITY);
  }
}

const keyOf = (endpoint: string, address: string) => `${endpoint}\n${address.toLowerCase()}`;
