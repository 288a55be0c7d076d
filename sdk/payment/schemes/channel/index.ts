/**
 * The `batch-settlement` scheme on EVM as the consumer pays it (x402 `scheme_batch_settlement_evm`;
 * scheme.ts says how it fits the pipeline): one deposit into a channel of the x402BatchSettlement
 * contract, then per call an off-chain cumulative voucher `charged + price`. The deposit is escrow
 * sized by the one deposit policy (deposit.ts), never counted as spent; the budget counts each
 * call's charge. Every answer is checked (charged ≤ asked, the server's cumulative = this client's +
 * the charge, the same channel); a server that fails a check gets no more vouchers. Vouchers of one
 * channel are signed one at a time (a lock per channel, held from signing until the call is over).
 *
 * A voucher key held in this process also signs the next call's voucher while a call is in flight
 * (voucher-ahead.ts), on a record in step with the server, within the channel's balance and when
 * the budget has room for one more call; a corrective 402, a smaller charge or a lost answer drops it.
 */
import { type Address, getAddress, isAddress, recoverTypedDataAddress, zeroAddress } from 'viem';
import { MarketError, type ChargeState } from '../../../http/errors';
import { isRecord, type Answer } from '../../../http/exchange';
import {
  batchSettlementDomain,
  type ChannelConfig,
  channelIdOf,
  decodeBase64Json,
  encodeBase64Json,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  erc3009DepositNonce,
  type Hex,
  MAX_WITHDRAW_DELAY,
  MIN_WITHDRAW_DELAY,
  normalizeNetwork,
  parseCaip2,
  PAYMENT_RESPONSE_HEADER,
  receiveWithAuthorizationTypes,
  voucherDigest,
  voucherTypes,
  X_PAYMENT_RESPONSE_HEADER,
} from '../../../x402/index';
import type { ChannelReader } from '../../../x402/channel-reader';
import { text, tokenDomainProblem, windowProblem } from '../../checks';
import { type ChannelRecord, type ChannelStore, memoryChannelStore } from './store';
import type { PaymentScheme, Refusal, RefusalVerdict, Settlement, SignedPayment, Terms } from '../../scheme';
import type { PaymentSigner } from '../../signer';
import { vouchersAhead } from './voucher-ahead';
import { DEFAULT_MAX_DEPOSIT, DEPOSIT_CALLS, depositFor } from './deposit';
import { BYTES32_PATTERN } from '../../../x402/patterns';

export { type ChannelOnChain, type ChannelReader, createChannelReader } from '../../../x402/channel-reader';

const ZERO_SALT = `0x${'0'.repeat(64)}` as Hex;
const CUMULATIVE_MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';
const BELOW_CLAIMED = 'invalid_batch_settlement_evm_cumulative_below_claimed';
const CHANNEL_BUSY = 'invalid_batch_settlement_evm_channel_busy';
/** A deposit that may have been sent although the answer says otherwise. */
const MAYBE_SPENT = new Set<string>(['invalid_batch_settlement_evm_deposit_transaction_failed']);
const NOTHING_MOVED = new Set<string>([
  'invalid_batch_settlement_evm_voucher_signature',
  'invalid_batch_settlement_evm_cumulative_exceeds_balance',
  'invalid_batch_settlement_evm_insufficient_balance',
  'invalid_batch_settlement_evm_deposit_simulation_failed',
  // The payer started a timed withdrawal: the server takes no more vouchers (nor deposits) on it.
  'invalid_batch_settlement_evm_withdrawal_pending',
  CUMULATIVE_MISMATCH,
  BELOW_CLAIMED,
  CHANNEL_BUSY,
]);

/** Options of {@link channelScheme}. */
export interface ChannelSchemeOptions {
  /** Most one deposit may put into a channel, atomic token units; default $1. */
  maxDeposit?: bigint;
  /** Where channel records live between calls; default in memory (rebuilt from the chain). */
  store?: ChannelStore;
  /** The chain, to recover a channel this client has no record of and to re-sync after a lost answer. */
  chain?: ChannelReader;
  /** How many calls one deposit aims to cover; default 10 (deposit.ts holds the policy). */
  depositCalls?: number;
  /** A channel is worth it when `maxDeposit` covers at least this many calls at the price; default 3. */
  minCalls?: number;
  /**
   * Signs the vouchers instead of the paying wallet, as the channel's `payerAuthorizer` (an EOA): a
   * key the page or agent holds, so a browser wallet is asked once per deposit, not once per call.
   * It can spend no more than what the channel holds. Its channels differ from the wallet's own.
   */
  voucherSigner?: PaymentSigner;
}

/** The payload of a batch-settlement payment (a voucher, with a deposit when the channel needs funds). */
export interface ChannelPayload {
  type: 'voucher' | 'deposit';
  channelConfig: ChannelConfig;
  voucher: { channelId: Hex; maxClaimableAmount: string; signature: Hex };
  deposit?: {
    amount: string;
    authorization: { erc3009Authorization: { validAfter: string; validBefore: string; salt: string; signature: Hex } };
  };
}

type ChannelPayment = SignedPayment<ChannelPayload>;

/** The channel scheme, with what a listing of channels needs. */
export interface ChannelScheme extends PaymentScheme<ChannelPayload> {
  /** Every channel this client has a record of. */
  channels(): Promise<ChannelRecord[]>;
}

/**
 * The `batch-settlement` scheme for {@link PaymentPipeline}: SkillMarket pays with it when a
 * server offers it and `payment` is `auto` or `channel`.
 *
 * @example
 * const pipeline = new PaymentPipeline({
 *   network: 'eip155:8453',
 *   schemes: [channelScheme({ maxDeposit: 1_000_000n, chain: createChannelReader(rpcUrl) }), exactScheme()],
 * });
 */
export function channelScheme(options: ChannelSchemeOptions): ChannelScheme {
  const store = options.store ?? memoryChannelStore();
  const chain = options.chain;
  const depositCalls = BigInt(options.depositCalls ?? DEPOSIT_CALLS);
  const maxDeposit = options.maxDeposit ?? DEFAULT_MAX_DEPOSIT;
  const minCalls = BigInt(options.minCalls ?? 3);
  const locks = new Map<string, Promise<void>>();
  const ahead = vouchersAhead();
  /** The release of the channel lock a payment (and its re-signed successors) holds. */
  const held = new WeakMap<object, () => void>();

  const lock = async (channelId: Hex): Promise<() => void> => {
    const key = channelId.toLowerCase();
    const before = locks.get(key) ?? Promise.resolve();
    let open!: () => void;
    const mine = new Promise<void>((resolve) => {
      open = resolve;
    });
    const tail = before.then(() => mine);
    locks.set(key, tail);
    await before;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      open();
      if (locks.get(key) === tail) locks.delete(key);
    };
  };

  /** The channel's record: the store's, else recovered from the chain (`recovered`: the charge may be behind the server's). */
  const recordOf = async (config: ChannelConfig, network: string, channelId: Hex): Promise<ChannelRecord & { recovered?: true }> => {
    const known = await store.get(channelId);
    if (known && !known.resync) return known;
    const onChain = await chain?.read(channelId).catch(() => undefined);
    if (known) return onChain ? { ...known, balance: holds(onChain), resync: false, recovered: true } : { ...known, recovered: true };
    // Recovery as the scheme describes it: the chain's balance, and its totalClaimed as the base
    // (a server holding later vouchers says so in a corrective 402).
    return {
      channelId,
      network,
      config,
      balance: onChain ? holds(onChain) : '0',
      charged: onChain ? onChain.totalClaimed.toString() : '0',
      recovered: true,
    };
  };

  /** The deposit paying `requirements` on `record` takes, by the policy (deposit.ts); throws above the caps. */
  const sized = (record: ChannelRecord, requirements: Terms, room: bigint | undefined): bigint => {
    const price = BigInt(requirements.amount);
    const minDeposit = requirements.extra?.minDeposit;
    return depositFor({
      price,
      minDeposit: uint(minDeposit) ? BigInt(minDeposit) : undefined,
      charged: BigInt(record.charged),
      balance: BigInt(record.balance),
      maxDeposit,
      budgetLeft: room === undefined ? room : room + price,
      calls: depositCalls,
    });
  };

  /** Marks the payment's channel record: `stopped` (no more vouchers) or `resync` (read the chain first). */
  const mark = async (payment: ChannelPayment, change: Pick<ChannelRecord, 'stopped' | 'resync'>): Promise<void> => {
    const { channelId } = payment.payload.payload.voucher;
    ahead.drop(channelId);
    const record = await store.get(channelId);
    if (record) await store.set({ ...record, ...change });
  };

  return {
    id: 'batch-settlement',
    maybeSpentReasons: MAYBE_SPENT,
    nothingMovedReasons: NOTHING_MOVED,

    accepts(candidate, { policy, asset }) {
      const domain = tokenDomainProblem(candidate.extra, asset);
      if (domain) return { ok: false, problem: domain, passed: 0 };
      const window = windowProblem(candidate.maxTimeoutSeconds, policy);
      if (window) return { ok: false, problem: window, passed: 1 };
      const extra = isRecord(candidate.extra) ? candidate.extra : {};
      const authorizer = extra.receiverAuthorizer;
      const delay = extra.withdrawDelay ?? MIN_WITHDRAW_DELAY;
      if (typeof authorizer !== 'string' || !isAddress(authorizer) || getAddress(authorizer) === zeroAddress) {
        return {
          ok: false,
          problem: { field: 'scheme', expected: 'batch-settlement with extra.receiverAuthorizer', actual: text(authorizer) },
          passed: 2,
        };
      }
      if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < MIN_WITHDRAW_DELAY || delay > MAX_WITHDRAW_DELAY) {
        return {
          ok: false,
          problem: { field: 'scheme', expected: `withdrawDelay ${MIN_WITHDRAW_DELAY} to ${MAX_WITHDRAW_DELAY} s`, actual: text(delay) },
          passed: 2,
        };
      }
      const amount = BigInt(candidate.amount as string);
      if (amount === 0n || amount * minCalls > maxDeposit) {
        return {
          ok: false,
          problem: {
            field: 'price',
            expected: `at most maxDeposit / ${minCalls} for a channel (option maxDeposit)`,
            actual: `${amount} atomic`,
          },
          passed: 3,
        };
      }
      const requirements: Terms = {
        scheme: 'batch-settlement',
        network: normalizeNetwork(candidate.network as string),
        amount: amount.toString(),
        asset: getAddress(candidate.asset as string),
        payTo: getAddress(candidate.payTo as string),
        maxTimeoutSeconds: candidate.maxTimeoutSeconds as number,
        extra: { ...extra, receiverAuthorizer: getAddress(authorizer), withdrawDelay: delay },
      };
      return { ok: true, requirements };
    },

    async deposit({ requirements }, payer, { room }) {
      const config = channelConfig(requirements, payer, options.voucherSigner?.address ?? payer);
      const record = await recordOf(config, requirements.network, channelIdOf(config, parseCaip2(requirements.network)));
      return record.stopped ? 0n : sized(record, requirements, room);
    },

    async sign(terms, signer, { resource, previous, room }) {
      const requirements = terms.requirements;
      const chainId = parseCaip2(requirements.network);
      const voucherSigner = options.voucherSigner ?? signer;
      const config = channelConfig(requirements, signer.address, voucherSigner.address);
      const channelId = channelIdOf(config, chainId);
      const inherited = previous && held.get(previous);
      const release = inherited && previous.payload.payload.voucher.channelId === channelId ? inherited : await lock(channelId);
      if (inherited && inherited !== release) inherited();
      try {
        const { recovered, ...record } = await recordOf(config, requirements.network, channelId);
        if (record.stopped) {
          throw new MarketError('channel_stopped', `no more vouchers on channel ${channelId}: ${record.stopped}`, { charged: 'no' });
        }
        const amount = BigInt(requirements.amount);
        const max = BigInt(record.charged) + amount;
        const balance = BigInt(record.balance);
        const size = sized(record, requirements, room);
        const deposit = size > 0n ? await signDeposit(signer, requirements, channelId, size) : undefined;
        const digest = voucherDigest(channelId, max, chainId);
        const signature = await ahead.sign(voucherSigner, channelId, max, chainId);
        const payload: ChannelPayload = {
          type: deposit ? 'deposit' : 'voucher',
          channelConfig: config,
          voucher: { channelId, maxClaimableAmount: max.toString(), signature },
          ...(deposit ? { deposit } : {}),
        };
        await store.set({ ...record, endpoint: record.endpoint ?? resource.url });
        const x402 = { x402Version: 2 as const, accepted: requirements, payload, resource };
        const payment: ChannelPayment = {
          requirements,
          payload: x402,
          proof: encodeBase64Json(x402),
          payer: signer.address,
          reference: digest,
          channelId,
          cumulative: max.toString(),
          ...(deposit ? { deposit: deposit.amount } : {}),
        };
        held.set(payment, release);
        // The next call's voucher, if this one is charged in full: on a record in step with the server, within the
        // balance already deposited and the budget.
        if (!deposit && !recovered && max + amount <= balance && (room === undefined || room >= amount))
          ahead.start(voucherSigner, channelId, max + amount, chainId);
        return payment;
      } catch (error) {
        release();
        throw error;
      }
    },

    async onRefused(refusal: Refusal<ChannelPayload>): Promise<RefusalVerdict> {
      const { reason, payment } = refusal;
      if (reason === CHANNEL_BUSY) return { type: 'retry', terms: await refusal.choose(), afterMs: 1000 };
      if (reason !== CUMULATIVE_MISMATCH && reason !== BELOW_CLAIMED) return { type: 'refused' };
      const voucher = payment.payload.payload.voucher;
      ahead.drop(voucher.channelId);
      const offer = refusal.candidates.find((c) => isRecord(c) && c.scheme === 'batch-settlement') as { extra?: unknown } | undefined;
      const extra = isRecord(offer?.extra) ? offer.extra : {};
      const state = isRecord(extra.channelState) ? extra.channelState : {};
      const signed = isRecord(extra.voucherState) ? extra.voucherState : {};
      const record = await store.get(voucher.channelId);
      if (!record) return { type: 'refused' };
      const onChain = await chain?.read(voucher.channelId).catch(() => undefined);
      let charged: bigint | undefined;
      if (uint(state.chargedCumulativeAmount) && uint(signed.signedMaxClaimable) && typeof signed.signature === 'string') {
        // The server's charge stands only on a voucher this client signed for at least that much.
        const claimed = BigInt(state.chargedCumulativeAmount);
        const max = BigInt(signed.signedMaxClaimable);
        const signer = await recoverTypedDataAddress({
          domain: batchSettlementDomain(parseCaip2(payment.requirements.network)),
          types: voucherTypes,
          primaryType: 'Voucher',
          message: { channelId: voucher.channelId, maxClaimableAmount: max },
          signature: signed.signature as Hex,
        }).catch(() => undefined);
        if (signer && getAddress(signer) === getAddress(record.config.payerAuthorizer) && claimed <= max) charged = claimed;
      } else if (onChain) {
        charged = onChain.totalClaimed;
      }
      if (charged === undefined || (onChain && charged < onChain.totalClaimed)) {
        return { type: 'refused', why: 'answered a channel state this client cannot verify: not re-signing' };
      }
      await store.set({
        ...record,
        charged: charged.toString(),
        ...(onChain ? { balance: holds(onChain) } : {}),
      });
      return { type: 'retry', terms: await refusal.choose() };
    },

    async onAnswer(answer: Answer, payment: ChannelPayment): Promise<Settlement> {
      const raw = answer.headers.get(PAYMENT_RESPONSE_HEADER) ?? answer.headers.get(X_PAYMENT_RESPONSE_HEADER);
      if (raw === null) return { settled: false, transaction: null };
      let response: unknown;
      try {
        response = decodeBase64Json(raw, 'malformed_settle_response', 'receipt');
      } catch {
        return { settled: false, transaction: null };
      }
      if (!isRecord(response) || response.success !== true) return { settled: false, transaction: null };
      const problem = responseProblem(response, payment);
      if (problem) {
        await mark(payment, { stopped: problem });
        return { settled: false, transaction: null, problem };
      }
      const { voucher, deposit } = payment.payload.payload;
      const record = await store.get(voucher.channelId);
      const { chargedAmount, channelState } = response.extra as {
        chargedAmount: string;
        channelState: { chargedCumulativeAmount: string };
      };
      const cumulative = channelState.chargedCumulativeAmount;
      if (record) {
        const balance = BigInt(record.balance) + (deposit ? BigInt(deposit.amount) : 0n);
        await store.set({ ...record, charged: cumulative, balance: balance.toString(), resync: false });
      }
      const transaction = deposit && typeof response.transaction === 'string' && BYTES32_PATTERN.test(response.transaction);
      // What this call was charged (checked above against the voucher): the handler's `charge`, at most the price.
      return {
        settled: true,
        transaction: transaction ? (response.transaction as Hex) : null,
        chargedCumulativeAmount: cumulative,
        charged: chargedAmount,
      };
    },

    /** A voucher moves nothing until the server claims it: the chain cannot tell what this call was charged. */
    async onChain(): Promise<{ charged: ChargeState; transaction: Hex | null }> {
      return { charged: 'unknown', transaction: null };
    },

    async finish(payment: ChannelPayment, charged: ChargeState) {
      const { channelId } = payment.payload.payload.voucher;
      try {
        // The voucher signed ahead is ready before the call ends (usually it was signed while the call was in flight).
        if (charged !== 'unknown') await ahead.ready(channelId);
        if (charged === 'unknown') await mark(payment, { resync: true });
      } finally {
        held.get(payment)?.();
      }
    },

    channels: () => store.list(),
  };
}

/** The channel this client opens with a server's terms: the wallet `payer` pays, `authorizer` signs vouchers, no salt. */
function channelConfig(requirements: Terms, payer: Address, authorizer: Address): ChannelConfig {
  const extra = requirements.extra as { receiverAuthorizer: `0x${string}`; withdrawDelay: number };
  return {
    payer: getAddress(payer),
    payerAuthorizer: getAddress(authorizer),
    receiver: getAddress(requirements.payTo),
    receiverAuthorizer: getAddress(extra.receiverAuthorizer),
    token: getAddress(requirements.asset),
    withdrawDelay: extra.withdrawDelay,
    salt: ZERO_SALT,
  };
}

/** An ERC-3009 ReceiveWithAuthorization of `amount` to the deposit collector, its nonce bound to the channel. */
async function signDeposit(signer: PaymentSigner, requirements: Terms, channelId: Hex, amount: bigint): Promise<ChannelPayload['deposit']> {
  const salt = BigInt(`0x${[...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, '0')).join('')}`);
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + requirements.maxTimeoutSeconds);
  const extra = requirements.extra as { name: string; version: string };
  const signature = await signer.signTypedData({
    domain: {
      name: extra.name,
      version: extra.version,
      chainId: parseCaip2(requirements.network),
      verifyingContract: getAddress(requirements.asset),
    },
    types: receiveWithAuthorizationTypes,
    primaryType: 'ReceiveWithAuthorization',
    message: {
      from: getAddress(signer.address),
      to: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
      value: amount,
      validAfter: 0n,
      validBefore,
      nonce: erc3009DepositNonce(channelId, salt),
    },
  });
  return {
    amount: amount.toString(),
    authorization: { erc3009Authorization: { validAfter: '0', validBefore: validBefore.toString(), salt: salt.toString(), signature } },
  };
}

/** What is wrong with a successful payment response, or undefined when it is consistent with what was signed. */
function responseProblem(response: Record<string, unknown>, payment: ChannelPayment): string | undefined {
  const extra = isRecord(response.extra) ? response.extra : {};
  const state = isRecord(extra.channelState) ? extra.channelState : {};
  const { voucher } = payment.payload.payload;
  const asked = BigInt(payment.requirements.amount);
  const signed = BigInt(voucher.maxClaimableAmount);
  if (!uint(extra.chargedAmount)) return `the server's answer names no charge (chargedAmount ${text(extra.chargedAmount)})`;
  const charged = BigInt(extra.chargedAmount);
  if (charged > asked) return `the server charged ${charged}, more than the ${asked} it asked`;
  if (typeof state.channelId !== 'string' || state.channelId.toLowerCase() !== voucher.channelId.toLowerCase())
    return `the server answered for channel ${text(state.channelId)}, not ${voucher.channelId}`;
  if (!uint(state.chargedCumulativeAmount)) return `the server's answer names no cumulative charge`;
  const cumulative = BigInt(state.chargedCumulativeAmount);
  const expected = signed - asked + charged;
  if (cumulative !== expected || cumulative > signed)
    return `the server's cumulative charge ${cumulative} is not this client's ${signed - asked} plus the ${charged} charged`;
  return undefined;
}

/** What a channel holds for its payer: its balance less a withdrawal under way. */
function holds(onChain: { balance: bigint; withdrawAmount: bigint }): string {
  return (onChain.balance - onChain.withdrawAmount).toString();
}

function uint(value: unknown): value is string {
  return typeof value === 'string' && /^\d{1,78}$/.test(value);
}
