/**
 * The `upto` scheme (Permit2 witness transfers through the x402 upto proxy) as this facilitator
 * settles it: the payer signs a maximum, the resource server settles the charge it decides, at most
 * that maximum, once.
 *
 * Single use: verify records an accepted authorization `verified` under Permit2's own key (network,
 * asset, payer, nonce); the first settle of exactly that payload moves it to `settling` with its
 * charge in one conditional update. A replayed verify, a settle of another payload for the key, or
 * any second settle finds the key taken and is refused `permit2_invalid_nonce`. A settle of a
 * payload never verified runs verify's checks (against the maximum) and records it straight as
 * `settling`.
 *
 * Exposure: what a payer's open authorizations may still take (a verified one its maximum until its
 * deadline, a settling one its charge) never exceeds the balance nor the Permit2 allowance read in
 * the payer's lock, however many requests arrive at once.
 *
 * The witness names one facilitator address: `/supported` offers the first relayer's, and a
 * settlement is sent from the relayer the witness names (the proxy accepts no other caller). A
 * charge of 0 sends nothing. Settlements answer once their receipt is seen (a transfer not seen in
 * time answers `settlement_pending` with its hash).
 */
import { getAddress, type Address, type PublicClient } from 'viem';
import { UPTO_SCHEME, parseCaip2, type Caip2Network, type SettleResponse } from 'skill-market/x402';
import type { DatabaseHandle } from '../../../db';
import type { Logger } from '../../../log';
import { revertText, safeError, type Rejection } from '../../chain';
import { findReceipt, isKnownTransaction, waitForReceipt } from '../../receipts';
import { MAX_SEND_ATTEMPTS, type RelayerPool } from '../../relayer';
import type { FacilitatorScheme } from '../../scheme';
import { unixSeconds, type Clock, type VerifyResponse } from '../../types';
import { SETTLE_GAS, createUptoChain, settleCall } from './chain';
import { REASONS } from './reasons';
import { parseUptoRequest, payloadHash, type UptoRequest } from './request';
import { createUptoStore, type UptoKey, type UptoRow } from './store';
import { checkTerms } from './verify';

export interface UptoSchemeDeps {
  database: DatabaseHandle;
  network: Caip2Network;
  /** Accepted token addresses. */
  assets: readonly Address[];
  client: PublicClient;
  relayers: RelayerPool;
  clock: Clock;
  logger: Logger;
  receiptTimeoutMs: number;
  pollIntervalMs: number;
  /** How often sent settlements whose receipt was not seen in time are looked up again, once started. */
  reconcileIntervalMs: number;
  stopping: AbortSignal;
}

/** What one pass over unfinished settlements found. */
export interface UptoReconcileReport {
  checked: number;
  settled: number;
  failed: number;
}

export interface UptoFacilitatorScheme extends FacilitatorScheme {
  /** One pass now over the settlements sent whose outcome is not recorded (the timer runs them after start). */
  reconcile(): Promise<UptoReconcileReport>;
}

/** Most unfinished settlements one reconcile pass looks up. */
const RECONCILE_BATCH = 100;

const replay: Rejection = { reason: REASONS.nonceUsed, message: 'This authorization was already presented' };

export function createUptoScheme(deps: UptoSchemeDeps): UptoFacilitatorScheme {
  const { clock, network, client, relayers, logger } = deps;
  const chainId = parseCaip2(network);
  const store = createUptoStore(deps.database.db, deps.database.kind);
  const chain = createUptoChain(client);
  const assets = new Set(deps.assets.map((a) => a.toLowerCase()));
  const facilitators = relayers.addresses as readonly Address[];
  const nowSeconds = () => BigInt(unixSeconds(clock));

  const keyOf = (request: UptoRequest): UptoKey => ({
    network: request.requirements.network,
    asset: getAddress(request.requirements.asset.toLowerCase()),
    payer: request.payer,
    nonce: BigInt(request.payment.permit2Authorization.nonce).toString(),
  });
  const terms = (request: UptoRequest, phase: 'verify' | 'settle') =>
    checkTerms(request, { network, assets, facilitators, nowSeconds: nowSeconds() }, phase);
  const failure = (
    request: Pick<UptoRequest, 'network'> & { payer?: Address | undefined },
    rejection: Rejection,
    transaction = '',
  ): SettleResponse => ({
    success: false,
    errorReason: rejection.reason,
    errorMessage: rejection.message,
    transaction,
    network: request.network,
    ...(request.payer ? { payer: request.payer } : {}),
  });

  /**
   * Admits a new authorization (verify: `verified`; a settle without verify: `settling` with its
   * charge). The signature, the spent nonce and a simulated settle of the maximum first, outside the
   * lock; then, in the payer's lock, the key, the balance and the allowance against what the
   * payer's open authorizations may still take, and the insert.
   */
  const admit = async (request: UptoRequest, state: 'verified' | 'settling', charge?: bigint): Promise<UptoRow | Rejection> => {
    const key = keyOf(request);
    const a = request.payment.permit2Authorization;
    const max = BigInt(a.permitted.amount);
    if (await store.taken(key)) return replay;
    if (!(await chain.signedByPayer(request.payment, chainId))) {
      return { reason: REASONS.invalidSignature, message: "The signature is not the payer's over this authorization" };
    }
    if (await chain.nonceSpent(request.payer, BigInt(a.nonce)))
      return { reason: REASONS.nonceUsed, message: 'Permit2 already spent this nonce' };
    const facilitator = getAddress(a.witness.facilitator);
    return store.exclusive(key, async (ledger) => {
      const standing = await ledger.standing(key, nowSeconds());
      if (standing.taken) return replay;
      const { balance, allowance } = await chain.funds(key.asset, key.payer);
      if (allowance < standing.open + max) {
        return {
          reason: REASONS.allowanceRequired,
          message: `The payer's allowance to Permit2 (${allowance}) does not cover ${max}${standing.open > 0n ? ` besides ${standing.open} of open authorizations` : ''}: approve Permit2 on the token once`,
        };
      }
      if (balance < standing.open + max) {
        return {
          reason: REASONS.insufficientBalance,
          message: `The payer holds ${balance}, of which ${standing.open} is held by open authorizations; ${max} is authorized`,
        };
      }
      const simulated = await chain.simulate(request.payment, max, facilitator);
      if (simulated) return simulated;
      const entry = {
        key,
        payee: getAddress(a.witness.to),
        facilitator,
        maxAmount: max,
        deadline: BigInt(a.deadline),
        payloadHash: payloadHash(request.payment),
      };
      return (await ledger.insert(entry, state, charge, clock.now())) ?? replay;
    });
  };

  /** Sends the settle of `row` for `amount` from the relayer the witness names, and answers with its outcome. */
  const send = async (request: UptoRequest, row: UptoRow, amount: bigint): Promise<SettleResponse> => {
    const log = logger.child({ scheme: UPTO_SCHEME, payer: request.payer, payee: row.payee, amount: amount.toString() });
    const relayer = relayers.byAddress(row.facilitator);
    if (!relayer) {
      await store.finish(row.id, 'failed', REASONS.facilitatorMismatch, clock.now());
      return failure(request, {
        reason: REASONS.facilitatorMismatch,
        message: 'No relayer of this facilitator is the one the authorization names',
      });
    }
    const call = settleCall(request.payment, amount);
    for (let attempt = 1; ; attempt++) {
      let hash: `0x${string}`;
      try {
        const result = await relayer.send({ ...call, gas: SETTLE_GAS }, (txHash) => store.recordTx(row.id, txHash, clock.now()));
        if (result.type === 'rejected') {
          const error = revertText(result.error);
          log.warn('relayer transaction refused', { tx: result.hash, error });
          if (result.retryable && attempt < MAX_SEND_ATTEMPTS) continue;
          await store.finish(row.id, 'failed', REASONS.transactionFailed, clock.now());
          return failure(request, { reason: REASONS.transactionFailed, message: `The node refused the transaction: ${error}` });
        }
        hash = result.hash;
      } catch (error) {
        log.error('upto settlement failed before broadcast', { error: safeError(error) });
        await store.finish(row.id, 'failed', REASONS.unexpectedSettleError, clock.now()).catch(() => undefined);
        return failure(request, { reason: REASONS.unexpectedSettleError, message: 'The settlement could not be submitted' });
      }
      const receipt = await waitForReceipt(client, hash, deps.receiptTimeoutMs, deps.pollIntervalMs, deps.stopping);
      if (!receipt) return failure(request, { reason: REASONS.settlementPending, message: 'Sent; the receipt was not seen in time' }, hash);
      if (receipt.status !== 'success') {
        await store.finish(row.id, 'failed', REASONS.transactionFailed, clock.now());
        return failure(request, { reason: REASONS.transactionFailed, message: 'The settlement reverted' }, hash);
      }
      await store.finish(row.id, 'settled', null, clock.now());
      log.info('upto payment settled', { tx: hash });
      return { success: true, transaction: hash, network: request.network, payer: request.payer, amount: amount.toString() };
    }
  };

  /**
   * Records the outcome of settlements answered `settlement_pending`: mined → settled or failed; no
   * longer known to the node after the deadline (it can never be mined) → failed.
   */
  const reconcile = async (): Promise<UptoReconcileReport> => {
    const report = { checked: 0, settled: 0, failed: 0 };
    for (const row of await store.unfinished(RECONCILE_BATCH)) {
      report.checked++;
      const hash = row.txHash as `0x${string}`;
      const receipt = await findReceipt(client, hash).catch(() => undefined);
      if (receipt) {
        const ok = receipt.status === 'success';
        await store.finish(row.id, ok ? 'settled' : 'failed', ok ? null : REASONS.transactionFailed, clock.now());
        report[ok ? 'settled' : 'failed']++;
      } else if (row.deadline < nowSeconds() && !(await isKnownTransaction(client, hash).catch(() => true))) {
        await store.finish(row.id, 'failed', REASONS.transactionFailed, clock.now());
        report.failed++;
      }
    }
    return report;
  };
  let timer: ReturnType<typeof setInterval> | undefined;

  return {
    id: UPTO_SCHEME,
    reconcile,
    start() {
      timer ??= setInterval(() => {
        reconcile().catch((error: unknown) => logger.warn('upto reconcile pass failed', { error: safeError(error) }));
      }, deps.reconcileIntervalMs);
      (timer as { unref?: () => void }).unref?.();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
    },
    kinds: [{ x402Version: 2, scheme: UPTO_SCHEME, network, extra: { facilitatorAddress: facilitators[0] } }],
    signers: { 'eip155:*': [...facilitators] },

    async verify(body): Promise<VerifyResponse> {
      const parsed = parseUptoRequest(body);
      if (parsed.type === 'invalid')
        return {
          isValid: false,
          invalidReason: parsed.reason,
          invalidMessage: parsed.message,
          ...(parsed.payer ? { payer: parsed.payer } : {}),
        };
      const request = parsed.request;
      const rejected = terms(request, 'verify') ?? (await admit(request, 'verified').then((r) => ('id' in r ? undefined : r)));
      if (rejected) return { isValid: false, invalidReason: rejected.reason, invalidMessage: rejected.message, payer: request.payer };
      return { isValid: true, payer: request.payer };
    },

    async settle(body): Promise<SettleResponse> {
      const parsed = parseUptoRequest(body);
      if (parsed.type === 'invalid') return failure(parsed, parsed);
      const request = parsed.request;
      const failed = terms(request, 'settle');
      if (failed) return failure(request, failed);
      const amount = BigInt(request.requirements.amount);
      // The verified payload: its signature and simulation stand; the charge is recorded in the claim.
      const claimed =
        (await store.claimVerified(keyOf(request), payloadHash(request.payment), amount, nowSeconds(), clock.now())) ??
        (await admit(request, 'settling', amount));
      if (!('id' in claimed)) return failure(request, claimed);
      if (amount === 0n) {
        await store.finish(claimed.id, 'settled', null, clock.now());
        return { success: true, transaction: '', network: request.network, payer: request.payer, amount: '0' };
      }
      return send(request, claimed, amount);
    },

    async missingOnChain() {
      const missing = await chain.missing();
      return missing.length === 0 ? undefined : `no code at ${missing.join(' nor at ')} on ${network}`;
    },
  };
}
