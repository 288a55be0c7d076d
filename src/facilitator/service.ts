/**
 * The facilitator's verbs, free of HTTP: verify, settle, supported, receipt. A request of the
 * `batch-settlement` scheme goes to channels/ whole; everything below is the `exact` scheme.
 *
 * Single use: verify records an accepted authorization as `verified` under the token's own key
 * (network, asset, payer, nonce); the first settle of exactly that payload moves it to `settling`
 * in one conditional update. A replayed verify, a settle of a different payload for the same key,
 * or any second settle finds the key taken and is refused `invalid_exact_evm_nonce_already_used`.
 * A settle of a payload never verified runs verify's checks and records it straight as `settling`
 * (a resource server that verifies at settlement saves a round trip; the mode it asks is kept).
 *
 * A record left `verified` (the resource server's handler failed, so it never settled; or it
 * died in between) means: every check passed, no money moved, and none will move through this
 * facilitator, since the proof is spent here and any later verify or settle of it is a replay.
 * The client signs a fresh authorization (the reference client does on every retry). The signed
 * proof itself stays valid on chain until validBefore, so its holder could still submit it
 * elsewhere: that is EIP-3009's nature, not something a ledger can stop. Such rows are inert and
 * may be pruned once validBefore has passed (the time-window check refuses them anyway).
 *
 * Exposure: what a payer owes (authorizations verified and still valid, or settling) never
 * exceeds their balance, however many requests arrive at once, on however many instances: each
 * admission runs alone per payer and asset (`admit`). Until it expires, a verified record holds its
 * amount against the balance, as the settle that may still claim it would take it.
 */
import type { Address } from 'viem';
import {
  authorizationKey,
  toV1Name,
  type BatchReceipt,
  type Caip2Network,
  type SettleResponse,
  type SettlementMode,
} from 'skill-market/x402';
import type { Logger } from '../log';
import type { MulticallBatcher } from './schemes/exact/multicall';
import { isChannelRequest, type ChannelService } from './schemes/channel';
import { toMulticallReceipt, type MulticallStore } from './schemes/exact/multicall-store';
import { transferCall, transferCalls, type ChainReader, type SignerKind } from './schemes/exact/chain';
import { REASONS } from './schemes/exact/reasons';
import type { RelayerPool } from './relayer';
import { keyOf, parseFacilitatorRequest, payloadHash, type PaymentRequest } from './schemes/exact/request';
import { settleFailure, submitSettlement, type SettleContext, type SettleOptions } from './schemes/exact/settle';
import { toPaymentReceipt, type AuthorizationRow, type NewAuthorization, type PaymentStore } from './schemes/exact/store';
import {
  unixSeconds,
  type Clock,
  type PaymentReceipt,
  type SettlementStatus,
  type SupportedResponse,
  type VerifyResponse,
  type AuthorizationKey,
} from './types';
import { checkAuthorization, checkTerms } from './schemes/exact/verify';
import type { Rejection } from './chain';

export interface FacilitatorServiceDeps extends SettleContext {
  network: Caip2Network;
  /** Accepted token addresses. */
  assets: readonly Address[];
  relayers: RelayerPool;
  store: PaymentStore;
  chain: ChainReader;
  clock: Clock;
  logger: Logger;
  /** How a settle that does not ask for a mode answers. */
  settlementMode: SettlementMode;
  /** When set, verified ECDSA transfers settle in batches through it. */
  multicallBatcher?: MulticallBatcher;
  /** Batched settlement transactions, for their receipts. */
  multicalls: MulticallStore;
  /** The `batch-settlement` scheme (payment channels), when this facilitator settles it. */
  channels?: ChannelService;
}

export interface FacilitatorService {
  /** `POST /verify`: throws FacilitatorRequestError on a malformed body. */
  verify(body: unknown): Promise<VerifyResponse>;
  /**
   * `POST /settle` (in `mode`, default the configured one): throws FacilitatorRequestError on a malformed body.
   * `bearer`: the caller's `Authorization: Bearer` token (a channel refund our authorizer signs needs the receiver's key).
   */
  settle(body: unknown, mode?: SettlementMode, bearer?: string): Promise<SettleResponse>;
  supported(): SupportedResponse;
  /** A settlement transaction: one payment's, or a batch's with each payment's outcome. */
  receipt(txHash: string): Promise<PaymentReceipt | BatchReceipt | undefined>;
  /** What became of one authorization; undefined when this facilitator never accepted it. */
  settlement(key: AuthorizationKey): Promise<SettlementStatus | undefined>;
  /** What became of each of several authorizations, in order; null for one never accepted here. */
  settlements(keys: readonly AuthorizationKey[]): Promise<(SettlementStatus | null)[]>;
}

/** The ledger's states as the outside sees them: `settling` is pending until the reconciler knows. */
const STATUS_OF_STATE = { verified: 'unsettled', settling: 'pending', settled: 'settled', failed: 'failed' } as const;

/** An authorization's outcome as the outside sees it. */
function statusOf(row: AuthorizationRow): SettlementStatus {
  const status = STATUS_OF_STATE[row.state];
  const answer: SettlementStatus = {
    status,
    network: row.network,
    payer: row.payer as Address,
    transaction: (row.txHash ?? '') as SettlementStatus['transaction'],
  };
  if (status === 'failed' && row.reason) answer.reason = row.reason;
  return answer;
}

const replay: Rejection = { reason: REASONS.nonceAlreadyUsed, message: 'This authorization was already presented' };

/** A payer whose settlement reverted is refused this long after the revert was recorded. */
const REVERTED_PAYER_REFUSAL_MS = 24 * 60 * 60 * 1000;
/** An admitted authorization, with what the payer owed besides and the balance read in the lock (if read). */
interface Admitted {
  row: AuthorizationRow;
  unconfirmed: bigint;
  balance: bigint | undefined;
}

const reverted: Rejection = {
  reason: REASONS.payerReverted,
  message: 'A recent settlement of this payer reverted; new authorizations are refused for 24 hours',
};

export function createFacilitatorService(deps: FacilitatorServiceDeps): FacilitatorService {
  const { store, chain, clock, network } = deps;
  const assets = new Set(deps.assets.map((a) => a.toLowerCase()));
  const simulateFrom = deps.relayers.addresses[0] as Address;

  const invalid = (rejection: Rejection, payer?: Address): VerifyResponse => ({
    isValid: false,
    invalidReason: rejection.reason,
    invalidMessage: rejection.message,
    ...(payer ? { payer } : {}),
  });
  const terms = (request: PaymentRequest) => checkTerms(request, { network, assets, now: unixSeconds(clock) });
  const record = (request: PaymentRequest, kind: SignerKind): NewAuthorization => {
    const a = request.payment.authorization;
    return {
      key: keyOf(request),
      payee: request.requirements.payTo,
      amount: a.value,
      validAfter: a.validAfter,
      validBefore: a.validBefore,
      payloadHash: payloadHash(request),
      signerKind: kind,
    };
  };

  /**
   * Admits a new authorization: verify records it `verified`, a settle without verify `settling`.
   * The domain and signature first; then the chain, outside the payer's lock: the simulated
   * transfer (it reads no ledger), and the balance when the standing read just before it shows
   * something owed (or it is asked for). Then, in the payer's lock (store.exclusive: one section at
   * a time per payer and asset, across instances), their standing again (replay, recent revert,
   * what their balance must still cover) and the insert. The balance read before the lock stands
   * for one read inside it only when the ledger did not change between the two standings (the
   * same number of authorizations, the same amount owed): no settlement of this payer was recorded
   * in between, so nothing the balance paid is missing from what is owed. Otherwise it is read
   * again in the lock (even when nothing is owed: the early simulation is then stale too). So what a payer's balance must cover, this authorization included, never
   * exceeds a balance read after the ledger state it is compared with: concurrent requests, to one
   * instance or several, cannot together be accepted for more than the payer holds, and the lock
   * (a pooled connection on PostgreSQL) is held for two statements, not for chain round trips.
   */
  const admit = async (request: PaymentRequest, state: 'verified' | 'settling', balanceWanted: boolean): Promise<Admitted | Rejection> => {
    const key = keyOf(request);
    const revertedSince = (now: Date) => new Date(now.getTime() - REVERTED_PAYER_REFUSAL_MS);
    const checked = await checkAuthorization(request, chain);
    if ('reason' in checked) {
      // A replay, or a payer refused for a revert, is named as such whatever else is wrong.
      const now = clock.now();
      const standing = await store.standing(key, now, revertedSince(now));
      return standing.taken ? replay : standing.reverted ? reverted : checked;
    }
    const value = BigInt(request.payment.authorization.value);
    const call = transferCall(request, checked.kind);
    const before = await store.standing(key, clock.now(), revertedSince(clock.now()));
    if (before.taken) return replay;
    if (before.reverted) return reverted;
    const [simulated, early] = await Promise.all([
      chain.simulate(call, simulateFrom, request),
      before.unconfirmed > 0n || balanceWanted ? chain.balanceOf(key.asset, key.payer) : undefined,
    ]);
    if (simulated) return simulated;
    return store.exclusive(key, async (ledger) => {
      const now = clock.now();
      const standing = await ledger.standing(key, now, revertedSince(now));
      if (standing.taken) return replay;
      if (standing.reverted) return reverted;
      let unconfirmed = standing.unconfirmed;
      const unchanged = standing.count === before.count && standing.unconfirmed === before.unconfirmed;
      // A changed ledger (a settlement recorded meanwhile) makes the early reads stale: the simulation
      // too, which alone vouches for the balance when nothing is owed.
      const wanted = unconfirmed > 0n || balanceWanted || !unchanged;
      let balance = !wanted ? undefined : unchanged && early !== undefined ? early : await chain.balanceOf(key.asset, key.payer);
      // Alone, the simulation shows the balance covers this payment; what is owed counts too.
      if (balance !== undefined && balance - unconfirmed < value && standing.settling) {
        // A settlement mined but not yet recorded is in the balance already: count only those whose
        // authorization is still unused on chain, against a balance read after that check.
        const used = await Promise.all(
          standing.settling.map((s) => chain.authorizationUsed(key.asset, key.payer, s.nonce).catch(() => false)),
        );
        if (used.some(Boolean)) {
          unconfirmed -= standing.settling.reduce((sum, s, i) => (used[i] ? sum + s.amount : sum), 0n);
          balance = await chain.balanceOf(key.asset, key.payer);
        }
      }
      if (balance !== undefined && balance - unconfirmed < value) {
        const message = `The payer holds ${balance}, of which ${unconfirmed} is owed to unconfirmed authorizations (verified or settling); ${value} is authorized`;
        return { reason: REASONS.insufficientBalance, message };
      }
      const row = await ledger.insert(record(request, checked.kind), state, now, state === 'settling' ? call.data : undefined);
      return row ? { row, unconfirmed, balance } : replay;
    });
  };
  const send = (request: PaymentRequest, claimed: AuthorizationRow, options: SettleOptions): Promise<SettleResponse> =>
    deps.multicallBatcher && claimed.signerKind === 'ecdsa'
      ? deps.multicallBatcher.submit(request, claimed, options)
      : submitSettlement(deps, request, claimed, options);

  const supported: SupportedResponse = {
    kinds: [
      { x402Version: 2, scheme: 'exact', network },
      ...(toV1Name(network) ? [{ x402Version: 1 as const, scheme: 'exact' as const, network: toV1Name(network) as string }] : []),
      ...(deps.channels ? [deps.channels.supportedKind()] : []),
    ],
    extensions: [],
    signers: { 'eip155:*': [...deps.relayers.addresses] },
  };

  return {
    async verify(body) {
      if (deps.channels && isChannelRequest(body)) return deps.channels.verify(body);
      const parsed = parseFacilitatorRequest(body);
      if (parsed.type === 'invalid') return invalid(parsed, parsed.payer);
      const request = parsed.request;
      const failed = terms(request);
      if (failed) return invalid(failed, request.payer);
      const admitted = await admit(request, 'verified', false);
      if ('reason' in admitted) return invalid(admitted, request.payer);
      return { isValid: true, payer: request.payer };
    },

    async settle(body, mode = deps.settlementMode, bearer) {
      if (deps.channels && isChannelRequest(body)) return deps.channels.settle(body, bearer);
      const parsed = parseFacilitatorRequest(body);
      if (parsed.type === 'invalid') return settleFailure(parsed, parsed);
      const request = parsed.request;
      const failed = terms(request);
      if (failed) return settleFailure(request, failed);
      const key = keyOf(request);
      // The verified payload: reuse verify's signature check and simulation, no second recovery
      // nor gas estimate. In broadcast mode the balance read after the claim bounds the exposure
      // (answerMode): the claim's amount of the payer's others was read before it.
      const claimed = await store.claimVerified(key, payloadHash(request), transferCalls(request), clock.now());
      if (claimed) {
        const balance = mode === 'broadcast' ? await chain.balanceOf(key.asset, key.payer).catch(() => undefined) : undefined;
        return send(request, claimed, { mode, simulated: true, unconfirmedOthers: claimed.unconfirmedOthers, balance });
      }
      // Settle without verify (a server that verifies at settlement): admitted as by verify,
      // straight into `settling`; in broadcast mode the balance read in the lock bounds the exposure.
      const admitted = await admit(request, 'settling', mode === 'broadcast');
      if ('reason' in admitted) return settleFailure(request, admitted);
      return send(request, admitted.row, {
        mode,
        simulated: true,
        unconfirmedOthers: admitted.unconfirmed,
        balance: admitted.balance,
      });
    },

    supported: () => structuredClone(supported),

    async receipt(txHash) {
      const row = await store.receipt(txHash);
      if (row) return toPaymentReceipt(row);
      const batch = await deps.multicalls.withMembers(txHash);
      return batch ? toMulticallReceipt(batch.batch, batch.members) : undefined;
    },

    async settlement(key) {
      const row = await store.authorization(key);
      return row ? statusOf(row) : undefined;
    },

    async settlements(keys) {
      const rows = await store.authorizations(keys);
      const byKey = new Map(rows.map((row) => [authorizationKey(row), row]));
      return keys.map((key) => {
        const row = byKey.get(authorizationKey(key));
        return row ? statusOf(row) : null;
      });
    },
  };
}
