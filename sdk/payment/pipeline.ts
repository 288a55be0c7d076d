/**
 * The consumer's one payment pipeline: quote → choose scheme and terms → sign → pay → verify the
 * answer (scheme.ts). SkillMarket.call, the marketplace page's Try it (with the visitor's wallet)
 * and `market mcp` (through SkillMarket) all pay through it.
 */
import type { FetchLike } from '../http/exchange';
import type { Skill } from '../registry/read';
import { normalizeNetwork, type Caip2Network } from '../x402/index';
import { PaidCall, type CallContext, type PaymentQuote } from './call';
import { exactScheme } from './schemes/exact';
import type { ChosenTerms, PaymentScheme, Terms, TermsPolicy } from './scheme';
import type { PaymentSigner } from './signer';
import { SpendingLedger } from './spending';
import type { ReceiptMode } from './receipt-check';
import { UsedTrials } from './used-trials';
import type { CallResult, PaymentMode, PaymentReceipt, SpendingSnapshot } from './types';

/** The pipeline's defaults (SkillMarket's too). */
export const PAYMENT_DEFAULTS = {
  timeoutMs: 60_000,
  retries: 2,
  maxTimeoutSeconds: 600,
  pendingTimeoutMs: 120_000,
  unavailableRetries: 3,
  unavailableMaxWaitMs: 10_000,
  mode: 'standard' as PaymentMode,
};

/** Options of {@link PaymentPipeline}; numbers are trusted as given (SkillMarket checks its own options). */
export interface PaymentPipelineOptions {
  /** The network this client pays on (CAIP-2); skills listed elsewhere are refused. */
  network: string;
  /** The schemes it pays with, in order of preference; default `[exactScheme()]`. */
  schemes?: readonly PaymentScheme[];
  /** Signs payments for {@link PaidCall.run}; {@link PaidCall.pay} may be given another. */
  signer?: PaymentSigner;
  /** The assets it pays in and the longest window it signs; default each network's USDC, 600 s. */
  policy?: Partial<TermsPolicy>;
  /** Most this pipeline may spend in total, atomic micro-USDC; default unlimited. */
  budget?: bigint;
  /** Highest price of any one call, atomic micro-USDC; default none beyond the listed price. */
  maxPrice?: bigint;
  /** Send proofs over plain http to non-loopback hosts; default false. */
  allowHttp?: boolean;
  /** Checks the input against the listing's inputSchema before any request; default none (the skill server checks it). */
  checkInput?: (skill: Skill, body: string) => Promise<void>;
  /** Default `globalThis.fetch`. */
  fetch?: FetchLike;
  /** Per-attempt timeout, ms; default 60 000. */
  timeoutMs?: number;
  /** Resends of a request that got no answer (the same proof); default 2. */
  retries?: number;
  /** How long a proof is re-sent while the server answers "payment pending", ms; default 120 000. */
  pendingTimeoutMs?: number;
  /** Retries of a 503 with Retry-After and the most they wait in all, ms; default 3 and 10 000. */
  unavailable?: { retries: number; maxWaitMs: number };
  /** The listing of a slug (fresh: not from a cache); needed to call by slug. */
  lookup?: (slug: string, fresh: boolean, signal?: AbortSignal) => Promise<{ skill: Skill; cached: boolean }>;
  /** Called once per paid call with its receipt and the scheme that paid it (e.g. usage records). */
  paid?: (receipt: PaymentReceipt, skill: Skill, scheme: string) => void;
  /** Default payment mode; default `standard`. */
  mode?: PaymentMode;
  /** A refused signed receipt: `strict` (default) throws ReceiptError carrying the result; `flag` returns the result flagged. */
  receipts?: ReceiptMode;
  /** The used-up free trials it remembers; default its own. */
  usedTrials?: UsedTrials;
}

/** Per-call options of {@link PaymentPipeline.start}. */
export interface PaymentCallOptions {
  mode?: PaymentMode;
  /** Highest price for this call, atomic micro-USDC; capped by the pipeline's. */
  maxPrice?: bigint;
  /** Per-attempt timeout, ms; default the pipeline's. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** What an outer budget leaves for this call, price included. */
  budgetLeft?: bigint;
  /** For `run()`: given the quote before anything is signed; throwing stops the call. */
  beforePay?: (quote: PaymentQuote) => void | Promise<void>;
  /** Use a free trial the skill offers before paying; default true. */
  trial?: boolean;
}

/**
 * Pays skills per call through x402, one pipeline whatever signs and whatever the scheme.
 *
 * @example
 * // A page paying with the visitor's wallet, showing the price before anything is signed:
 * const pipeline = new PaymentPipeline({ network: 'eip155:8453' });
 * const call = pipeline.start(skill, { text: 'hello' }); // a listing from RegistryClient.skill()
 * const quote = await call.quote();
 * if (quote.type === 'payment-required' && confirm(`Pay ${quote.skill.price}?`)) {
 *   const { result, receipt } = await call.pay(eip1193Signer(window.ethereum, address));
 * }
 */
export class PaymentPipeline {
  private readonly context: CallContext;
  private readonly ledger: SpendingLedger;
  private readonly timeoutMs: number;
  private readonly mode: PaymentMode;

  /** @throws TypeError for a network that is not CAIP-2 */
  constructor(options: PaymentPipelineOptions) {
    let network: Caip2Network;
    try {
      network = normalizeNetwork(options.network);
    } catch {
      throw new TypeError('PaymentPipeline: network must be a CAIP-2 id such as eip155:8453');
    }
    const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const lookup = options.lookup;
    this.timeoutMs = options.timeoutMs ?? PAYMENT_DEFAULTS.timeoutMs;
    this.mode = options.mode ?? PAYMENT_DEFAULTS.mode;
    this.ledger = new SpendingLedger(options.budget);
    this.context = {
      lookup: (slug, fresh, signal) => {
        if (!lookup) throw new TypeError('PaymentPipeline: calling by slug needs options.lookup; pass the listing instead');
        return lookup(slug, fresh, signal);
      },
      schemes: options.schemes ?? [exactScheme()],
      signer: options.signer,
      ledger: this.ledger,
      policy: {
        allowed: options.policy?.allowed ?? [],
        maxTimeoutSeconds: options.policy?.maxTimeoutSeconds ?? PAYMENT_DEFAULTS.maxTimeoutSeconds,
      },
      network,
      maxPrice: options.maxPrice,
      allowHttp: options.allowHttp ?? false,
      checkInput: options.checkInput,
      fetch: fetchImpl,
      retries: options.retries ?? PAYMENT_DEFAULTS.retries,
      pendingTimeoutMs: options.pendingTimeoutMs ?? PAYMENT_DEFAULTS.pendingTimeoutMs,
      unavailable: options.unavailable ?? {
        retries: PAYMENT_DEFAULTS.unavailableRetries,
        maxWaitMs: PAYMENT_DEFAULTS.unavailableMaxWaitMs,
      },
      learned: new Map<string, ChosenTerms<Terms>>(),
      paid: options.paid,
      receipts: options.receipts ?? 'strict',
      usedTrials: options.usedTrials ?? new UsedTrials(),
    };
  }

  /**
   * A call of `target` (a slug, looked up with `options.lookup`, or a listing) with `input`:
   * `quote()` then `pay(signer)`, or `run()`.
   *
   * @example
   * const call = pipeline.start('word-count', { text: 'one two' });
   * const quote = await call.quote(); // terms checked against the listing, nothing signed
   */
  start<T = unknown>(target: string | Skill, input: unknown, options: PaymentCallOptions = {}): PaidCall<T> {
    return new PaidCall<T>(this.context, target, input, {
      ...options,
      mode: options.mode ?? this.mode,
      timeoutMs: options.timeoutMs ?? this.timeoutMs,
    });
  }

  /**
   * One call start to end with the pipeline's signer.
   *
   * @example const { result, receipt } = await pipeline.call('word-count', { text: 'one two' });
   */
  call<T = unknown>(target: string | Skill, input: unknown, options: PaymentCallOptions = {}): Promise<CallResult<T>> {
    return this.start<T>(target, input, options).run();
  }

  /**
   * What this pipeline has spent and holds, in atomic micro-USDC.
   *
   * @example pipeline.spending.remaining // undefined without a budget
   */
  get spending(): SpendingSnapshot {
    return this.ledger.snapshot();
  }
}
