/**
 * The `exact` scheme (EIP-3009 `transferWithAuthorization`) as this facilitator settles it: verify,
 * settle (one transaction per payment, or Multicall3 transactions of several: multicall.ts), the
 * single-use ledger (store.ts) and the reconciler that finishes what a settle could not see.
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
import { authorizationKey, toV1Name, type Caip2Network, type SettleResponse, type SettlementMode } from 'skill-market/x402';
import type { DatabaseHandle } from '../../../db';
import type { Rejection } from '../../chain';
import { createReceiptWatcher } from '../../receipts';
import type { FacilitatorScheme } from '../../scheme';
import { unixSeconds, type VerifyResponse } from '../../types';
import { createChainReader, transferCall, transferCalls, type SignerKind } from './chain';
import { createMulticallBatcher } from './multicall';
import { createMulticallStore, toMulticallReceipt } from './multicall-store';
import { REASONS } from './reasons';
import { createReconciler, type ReconcileReport } from './reconciler';
import { keyOf, parseFacilitatorRequest, payloadHash, type PaymentRequest } from './request';
import { settleFailure, submitSettlement, type SettleContext, type SettleOptions } from './settle';
import { createPaymentStore, statusOf, toPaymentReceipt, type AuthorizationRow, type NewAuthorization } from './store';
import { checkAuthorization, checkTerms } from './verify';

/** The scheme's wire id. */
export const EXACT_SCHEME = 'exact';

/** What the scheme takes from the facilitator besides what its settlements need (SettleContext). */
export interface ExactSchemeDeps
  extends Pick<
    SettleContext,
    'client' | 'relayers' | 'clock' | 'logger' | 'receiptTimeoutMs' | 'pollIntervalMs' | 'background' | 'stopping'
  > {
  database: DatabaseHandle;
  network: Caip2Network;
  /** Accepted token addresses. */
  assets: readonly Address[];
  /** How often the reconciler runs once started. */
  reconcileIntervalMs: number;
  /** How a settle that does not ask for a mode answers. */
  settlementMode: SettlementMode;
  /** Multicall3 settlement (FACILITATOR_BATCH_*): a `maxSize` of 1 or less settles each payment alone. */
  multicall: { maxSize: number; maxWaitMs: number; eager: boolean };
}

export interface ExactScheme extends FacilitatorScheme {
  /** One reconciliation pass now (the timer runs them every `reconcileIntervalMs` after start). */
  reconcile(): Promise<ReconcileReport>;
}

/** Multicall size for authorizations a stopped process left, when this instance does not use Multicall3. */
const RESUMED_MULTICALL_SIZE = 20;

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

export function createExactScheme(deps: ExactSchemeDeps): ExactScheme {
  const { clock, network, client } = deps;
  const store = createPaymentStore(deps.database.db, deps.database.kind);
  const chain = createChainReader(client);
  const multicalls = createMulticallStore(deps.database.db);
  const receipts = createReceiptWatcher(client, deps.pollIntervalMs, deps.stopping);
  const settleContext: SettleContext = { ...deps, store, chain, receipts };
  const multicallOn = deps.multicall.maxSize > 1;
  // Always there: the reconciler sends what a stopped process claimed but never sent.
  const multicallBatcher = createMulticallBatcher(
    { ...settleContext, multicalls, network },
    {
      maxSize: multicallOn ? deps.multicall.maxSize : RESUMED_MULTICALL_SIZE,
      maxWaitMs: deps.multicall.maxWaitMs,
      eager: deps.multicall.eager,
    },
  );
  const reconciler = createReconciler({ ...settleContext, multicalls, multicallBatcher, intervalMs: deps.reconcileIntervalMs });
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
    multicallOn && claimed.signerKind === 'ecdsa'
      ? multicallBatcher.submit(request, claimed, options)
      : submitSettlement(settleContext, request, claimed, options);

  const v1Name = toV1Name(network);
  return {
    id: EXACT_SCHEME,
    kinds: [
      { x402Version: 2, scheme: EXACT_SCHEME, network },
      ...(v1Name ? [{ x402Version: 1 as const, scheme: EXACT_SCHEME, network: v1Name }] : []),
    ],
    signers: { 'eip155:*': [...deps.relayers.addresses] },

    async verify(body) {
      const parsed = parseFacilitatorRequest(body);
      if (parsed.type === 'invalid') return invalid(parsed, parsed.payer);
      const request = parsed.request;
      const failed = terms(request);
      if (failed) return invalid(failed, request.payer);
      const admitted = await admit(request, 'verified', false);
      if ('reason' in admitted) return invalid(admitted, request.payer);
      return { isValid: true, payer: request.payer };
    },

    async settle(body, { mode = deps.settlementMode }) {
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

    async receipt(txHash) {
      const row = await store.receipt(txHash);
      if (row) return toPaymentReceipt(row);
      const multicall = await multicalls.withMembers(txHash);
      return multicall ? toMulticallReceipt(multicall.multicall, multicall.members) : undefined;
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

    start: () => reconciler.start(),
    /** Queued authorizations are sent, not dropped. */
    drain: () => multicallBatcher.drain(),
    stop: () => reconciler.stop(),
    reconcile: () => reconciler.runOnce(),
  };
}
