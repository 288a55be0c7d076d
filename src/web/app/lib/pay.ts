/**
 * A paid call from the browser through the SDK's payment pipeline, the one SkillMarket.call runs,
 * with the visitor's wallet as its signer: the unpaid request's 402 terms are checked against the
 * registry listing (network, payTo, exact price, asset, window), the user confirms the price, the
 * wallet signs, the proof is sent (again as is after a lost answer, a 503 or "payment pending"),
 * and the answer says the result and whether money moved. A visitor who opted into channels pays
 * a skill that offers `batch-settlement` through one: the wallet signs the deposit, the browser's
 * session key each call's voucher (lib/channels.ts). The deposit follows the SDK's one deposit
 * policy (`depositFor`), as SkillMarket, `market call` and `market mcp` do, and is shown before
 * the wallet is asked ({@link depositOf}).
 */
import {
  channelScheme,
  depositFor,
  UsedTrials,
  eip1193Signer,
  exactScheme,
  MarketError,
  PaidCallError,
  PaymentPipeline,
  readAllowedAssets,
  SkillCallError,
  type ChargeState,
  type PaidCall,
  type PaymentReceipt,
  type PaymentSigner,
  type Quote,
} from 'skill-market/client';
import type { Skill } from 'skill-market/registry';
import { decodePaymentRequired, PAYMENT_REQUIRED_HEADER } from 'skill-market/x402';
import { browserChannelStore, channelLeft, openChannel, sessionKey } from './channels';
import type { PageConfig } from './config';
import type { Eip1193Provider } from './wallet/provider';

/**
 * The free trials this page found used up, by skill and wallet: shared by every call's pipeline,
 * so a wallet whose trial is used up signs no sign-in again until it comes back (the server's
 * `X-Trial-Resets-At`, else for the rest of the page session), and Try it says so.
 */
export const usedTrials = new UsedTrials();

/** The skill's answer: the handler's result, or the reason it failed. */
export type SkillAnswer = { status: number; ok: true; result: unknown } | { status: number; ok: false; error: string };

/** The unpaid request's outcome: terms to confirm, or an answer already (a free call, a refused input). */
export type Quoted =
  | {
      type: 'payment-required';
      terms: Extract<Quote, { type: 'payment-required' }>['terms'];
      call: PaidCall;
      /** The 402 offers `batch-settlement` as well as `exact`: the visitor may pay through a channel. */
      offersChannel: boolean;
      /** The 402 offers `upto`: the price is the most a call costs, and the skill charges what it used. */
      usageBased: boolean;
      /** The server's announced least deposit for a channel (`extra.minDeposit`), atomic units. */
      minDeposit: bigint | undefined;
    }
  | {
      type: 'answered';
      answer: SkillAnswer;
      /** A free trial call (the wallet signed a sign-in, nothing was paid): the free calls left, when the server said. */
      trial?: { callsLeft: number | undefined };
    };

/** A call paid from a channel: its deposit and transaction (when it made one), its charge, and what the channel holds after it. */
export interface ChannelPaid {
  deposit: `0x${string}` | null;
  /** What the call deposited into the channel first, atomic units; undefined when it made no deposit. */
  deposited: bigint | undefined;
  charged: bigint;
  left: bigint;
}

export interface PaidOutcome {
  answer: SkillAnswer;
  /** Whether the payment went through, as the SDK verified it. */
  charged: ChargeState;
  /** The payment (transaction null when none was reported); undefined when not charged. */
  receipt: PaymentReceipt | undefined;
  /** Set when the call was paid through a channel. */
  channel?: ChannelPaid;
}

/**
 * The page's pipeline: `exact` only, or with `channel` a channel first (deposits by the SDK's
 * policy, vouchers signed by the session key) and `exact` where none is offered. `offered` learns
 * the offers of each 402, by scheme.
 */
function pipeline(
  config: PageConfig,
  channel: boolean,
  offered: Map<string, Record<string, unknown>>,
  signer?: PaymentSigner,
): PaymentPipeline {
  return new PaymentPipeline({
    network: config.network.id,
    // Given only to try a skill free: the SDK then signs the skill's sign-in before any payment.
    ...(signer ? { signer } : {}),
    usedTrials,
    schemes: channel
      ? [
          channelScheme({
            store: browserChannelStore,
            voucherSigner: sessionKey(),
          }),
          exactScheme(),
        ]
      : [exactScheme()],
    policy: {
      allowed: readAllowedAssets([{ network: config.network.id, address: config.asset.address, decimals: config.asset.decimals }]),
    },
    // The registry decides which endpoints it lists, and a page on https cannot reach plain http
    // beyond this machine anyway (mixed content).
    allowHttp: true,
    fetch: async (input, init) => {
      const response = await fetch(input, { ...init, mode: 'cors', credentials: 'omit' });
      if (response.status === 402) for (const offer of offers(response)) if (!offered.has(offer.scheme)) offered.set(offer.scheme, offer);
      return response;
    },
  });
}

/** The offers of a 402's PAYMENT-REQUIRED header (none when unreadable: the pipeline says why). */
function offers(response: Response): { scheme: string; extra?: Record<string, unknown> }[] {
  const header = response.headers.get(PAYMENT_REQUIRED_HEADER);
  if (!header) return [];
  try {
    return decodePaymentRequired(header).accepts;
  } catch {
    return [];
  }
}

/** A failed call as the page shows it: the skill server's status and reason, and what it cost. */
function failure(error: unknown): PaidOutcome | undefined {
  if (!(error instanceof MarketError) || error.status === undefined) return undefined;
  return {
    answer: { status: error.status, ok: false, error: error.message },
    charged: error.charged,
    receipt: error instanceof PaidCallError ? error.receipt : undefined,
  };
}

/**
 * Sends the input unpaid: a 402 gives terms checked against the listing; any other answer is
 * returned as is. With `trialWallet`, a skill's free trial is asked first: the wallet signs its
 * sign-in (no payment), and a free call comes back answered; once none is left, the terms to pay,
 * and that wallet is asked no sign-in for the skill again while its trial is used up ({@link usedTrials}).
 */
export async function quote(
  skill: Skill,
  input: unknown,
  config: PageConfig,
  channel = false,
  trialWallet?: { provider: Eip1193Provider; address: `0x${string}` },
): Promise<Quoted> {
  const offered = new Map<string, Record<string, unknown>>();
  // A trial known to be used up is not asked again: no sign-in, not even for a volume price quote.
  const trying = trialWallet && usedTrials.until(skill.endpoint, trialWallet.address) === undefined;
  const signer = trying ? eip1193Signer(trialWallet.provider, trialWallet.address) : undefined;
  const call = pipeline(config, channel, offered, signer).start(skill, input);
  try {
    const quoted = await call.quote();
    if (quoted.type === 'payment-required') {
      const offersChannel = offered.has('batch-settlement') && offered.has('exact');
      const announced = (offered.get('batch-settlement')?.extra as { minDeposit?: unknown } | undefined)?.minDeposit;
      const minDeposit = typeof announced === 'string' && /^\d{1,30}$/.test(announced) ? BigInt(announced) : undefined;
      return { type: 'payment-required', terms: quoted.terms, call, offersChannel, minDeposit, usageBased: offered.has('upto') };
    }
    const answer: SkillAnswer = { status: 200, ok: true, result: quoted.result.result };
    return quoted.result.trial
      ? { type: 'answered', answer, trial: { callsLeft: quoted.result.trialCallsLeft } }
      : { type: 'answered', answer };
  } catch (error) {
    if (error instanceof MarketError && error.code === 'network_error') {
      throw new Error(
        `The skill server at ${new URL(skill.endpoint).origin} could not be reached from this browser (offline, or it does not allow calls from web pages).`,
      );
    }
    // The skill answered the unpaid request with an error (e.g. it refused the input): nothing was paid.
    const failed = error instanceof SkillCallError ? failure(error) : undefined;
    if (failed) return { type: 'answered', answer: failed.answer };
    throw error;
  }
}

/**
 * What paying `quoted` from `payer` deposits into a payment channel first, by the SDK's deposit
 * policy, before anything is signed: for the channel terms, the pipeline's own figure; for `exact`
 * terms of a skill that also offers a channel, what opting in would deposit. 0n when the channel
 * holds enough; undefined when no channel is involved. Throws when the policy's cap refuses it.
 */
export async function depositOf(
  quoted: Extract<Quoted, { type: 'payment-required' }>,
  payer: `0x${string}` | undefined,
): Promise<bigint | undefined> {
  const requirements = quoted.terms.requirements;
  if (payer && requirements.scheme === 'batch-settlement') return quoted.call.deposit(payer);
  if (requirements.scheme !== 'batch-settlement' && !quoted.offersChannel) return undefined;
  // Before a wallet is connected, or for the opt-in: the channel this browser holds with the payee, else a new one.
  const open = openChannel(await browserChannelStore.list(), requirements.payTo, payer);
  return depositFor({
    price: BigInt(requirements.amount),
    minDeposit: quoted.minDeposit,
    charged: BigInt(open?.charged ?? '0'),
    balance: BigInt(open?.balance ?? '0'),
  });
}

/** Signs the confirmed terms with the wallet, sends the paid request and verifies the answer. */
export async function pay(
  quoted: Extract<Quoted, { type: 'payment-required' }>,
  wallet: { provider: Eip1193Provider; address: `0x${string}` },
): Promise<PaidOutcome> {
  const requirements = quoted.terms.requirements;
  const channelOf = async () => openChannel(await browserChannelStore.list(), requirements.payTo, wallet.address);
  try {
    const before = requirements.scheme === 'batch-settlement' ? await channelOf() : undefined;
    const { result, receipt } = await quoted.call.pay(eip1193Signer(wallet.provider, wallet.address));
    const answer: SkillAnswer = { status: 200, ok: true, result };
    const after = requirements.scheme === 'batch-settlement' ? await channelOf() : undefined;
    if (receipt && after) {
      // The server named the channel's new cumulative charge (the scheme checked it): this call's
      // charge is its growth, which may be less than the price.
      const charged = BigInt(after.charged) - BigInt(before?.charged ?? '0');
      const channel = {
        deposit: receipt.transaction,
        deposited: receipt.deposit === undefined ? undefined : BigInt(receipt.deposit),
        charged: before ? charged : BigInt(receipt.amount),
        left: channelLeft(after),
      };
      return { answer, charged: 'yes', receipt, channel };
    }
    // A 2xx to a proof is paid: confirmed when the server names the settlement, else not known.
    const charged = !receipt ? 'no' : receipt.transaction ? 'yes' : 'unknown';
    return { answer, charged, receipt: receipt ?? undefined };
  } catch (error) {
    const failed = failure(error);
    if (failed) return failed;
    throw error;
  }
}
