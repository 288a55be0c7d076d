/**
 * Multicall3 settlement of exact transfers (FACILITATOR_BATCH_*): claimed authorizations (verified
 * ECDSA transfers) wait in a queue that is flushed when it holds `maxSize` of them or `maxWaitMs`
 * after the first arrived (or, `eager`, as soon as a relayer is free to send), as one transaction
 * to Multicall3 `aggregate3`, one `transferWithAuthorization` call per authorization, each with
 * `allowFailure`, so one bad authorization (balance moved away, nonce used elsewhere) fails alone.
 * Each queued authorization's calldata is stored when it is queued, and the multicall and its
 * members are recorded before the broadcast (see multicall-store.ts), so a restart loses nothing
 * and never sends a member twice: the reconciler sends what a stopped process had queued but not
 * sent (`resume`) and reads a sent multicall's outcome from its stored hash. Each settle call
 * answers its own outcome: at the broadcast in `broadcast` mode (within the payer's exposure
 * bound), else once the receipt is read.
 */
import { encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import type { SettleResponse } from 'skill-market/x402';
import { transferCall } from './chain';
import { multicallOutcome, type AnsweredOutcome } from './multicall-outcome';
import type { MulticallStore } from './multicall-store';
import { REASONS } from './reasons';
import { waitForReceipt } from '../../receipts';
import { type SendResult, MAX_SEND_ATTEMPTS, AlreadySent } from '../../relayer';
import type { PaymentRequest } from './request';
import {
  answerMode,
  BACKGROUND_RECEIPT_TIMEOUT_MS,
  SIMULATED_TRANSFER_GAS,
  settleFailure,
  submitSettlement,
  type SettleContext,
  type SettleOptions,
} from './settle';
import type { AuthorizationRow } from './store';
import { revertText, safeError } from '../../chain';

/** Multicall3, at the same address on every chain that has it (Base included). */
const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

const multicall3Abi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
]);

/** Gas of the batch beyond its transfers: the transaction, the loop and the returned results. */
const MULTICALL_BASE_GAS = 60_000n;

/** What a batch needs beyond a single settlement: where batches are stored, and the network. */
type MulticallContext = SettleContext & { multicalls: MulticallStore; network: string };

export interface MulticallSettings {
  /** Authorizations per transaction; the queue flushes once it holds this many. */
  maxSize: number;
  /** Longest wait of the first queued authorization before a flush. */
  maxWaitMs: number;
  /**
   * Send as soon as a relayer is free: an authorization arriving with nothing queued and a relayer
   * free settles alone at once (an unbatched settlement, no wait); under load the authorizations
   * that arrive while transactions are being sent share the next one. Else wait for a full batch
   * or `maxWaitMs`.
   */
  eager?: boolean;
}

export interface MulticallBatcher {
  /** Queues a claimed authorization (state `settling`, ECDSA, simulated by verify) and answers its outcome. */
  submit(request: PaymentRequest, claimed: AuthorizationRow, options: SettleOptions): Promise<SettleResponse>;
  /** Flushes whatever is queued now and sends what comes after at once (the facilitator's stop calls it before the waits end). */
  drain(): void;
  /** Sends queued authorizations that a stopped process left unsent (see MulticallStore.orphans); resolves once their outcome is known or left to the reconciler. */
  resume(rows: readonly (AuthorizationRow & { batchCall: string })[]): Promise<void>;
}

interface Entry {
  claimed: AuthorizationRow;
  callData: Hex;
  /** Who the answer names: the request's network and payer. */
  who: Pick<PaymentRequest, 'network' | 'payer'>;
  /** Answers at the broadcast (exposure covered) rather than at the receipt. */
  early: boolean;
  answered: boolean;
  answer(response: SettleResponse): void;
}

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

export function createMulticallBatcher(ctx: MulticallContext, settings: MulticallSettings): MulticallBatcher {
  let queue: Entry[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** Batches being signed and broadcast; `eager` sends while fewer than the relayers. */
  let sending = 0;
  const lanes = Math.max(1, ctx.relayers.addresses.length);
  /** Set by drain (the facilitator stopping): a settle still arriving is sent at once, not left to a timer. */
  let draining = false;

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batches = chunks(queue, settings.maxSize);
    queue = [];
    for (const entries of batches) {
      sending++;
      ctx.background(() =>
        settleMulticall(ctx, entries, () => {
          sending--;
          if (settings.eager && queue.length > 0 && sending < lanes) flush();
        }),
      );
    }
  };

  return {
    async submit(request, claimed, options) {
      if (settings.eager && queue.length === 0 && sending < lanes) {
        // Nothing to share a transaction with: settle it alone at once, as an unbatched settlement.
        sending++;
        return submitSettlement(ctx, request, claimed, options).finally(() => {
          sending--;
          if (queue.length > 0 && sending < lanes) flush();
        });
      }
      // Its calldata was stored with its claim (store.ts): a stop before the flush leaves it to the reconciler.
      const callData = transferCall(request, claimed.signerKind).data;
      return new Promise<SettleResponse>((resolve) => {
        const entry: Entry = {
          claimed,
          callData,
          who: request,
          early: answerMode(options, request.payment.authorization.value) === 'broadcast',
          answered: false,
          answer(response) {
            if (entry.answered) return;
            entry.answered = true;
            resolve(response);
          },
        };
        queue.push(entry);
        if (draining || queue.length >= settings.maxSize || (settings.eager && sending < lanes)) flush();
        else timer ??= setTimeout(flush, settings.maxWaitMs);
      });
    },
    drain() {
      draining = true;
      flush();
    },
    async resume(rows) {
      const entries = rows.map(
        (row): Entry => ({
          claimed: row,
          callData: row.batchCall as Hex,
          who: { network: row.network as PaymentRequest['network'], payer: row.payer as Address },
          early: false,
          answered: true, // nobody waits for these answers any more
          answer: () => undefined,
        }),
      );
      // Batched where the chain has Multicall3 (a local chain may not), else one by one; all at once,
      // side by side: each is awaited only up to the receipt timeout, the reconciler does the rest.
      const size = entries.length > 1 && (await ctx.chain.hasCode(MULTICALL3_ADDRESS).catch(() => false)) ? settings.maxSize : 1;
      await Promise.all(chunks(entries, size).map((batch) => settleMulticall(ctx, batch)));
    },
  };
}

/**
 * Sends one batch, answers each member, and records the outcome when the receipt is seen in time.
 * `sent` is called once the broadcast is over (sent, refused or failed). A batch of one is sent as
 * the transfer itself, without Multicall3 (its outcome reads the same from the receipt).
 */
async function settleMulticall(ctx: MulticallContext, entries: readonly Entry[], sent: () => void = () => undefined): Promise<void> {
  let over = false;
  const broadcastOver = () => {
    if (over) return;
    over = true;
    sent();
  };
  try {
    await sendAndSettle(ctx, entries, broadcastOver);
  } finally {
    broadcastOver();
  }
}

async function sendAndSettle(ctx: MulticallContext, entries: readonly Entry[], broadcastOver: () => void): Promise<void> {
  const { clock, logger } = ctx;
  const memberIds = entries.map((e) => e.claimed.id);
  const failAll = async (reason: string, message: string) => {
    await ctx.multicalls.failUnsent(memberIds, reason, clock.now()).catch(() => undefined);
    for (const e of entries) e.answer(settleFailure(e.who, { reason, message }));
  };
  const single = entries.length === 1 ? entries[0] : undefined;
  const call = single
    ? { to: single.claimed.asset as Address, data: single.callData, gas: SIMULATED_TRANSFER_GAS }
    : {
        to: MULTICALL3_ADDRESS,
        data: encodeFunctionData({
          abi: multicall3Abi,
          functionName: 'aggregate3',
          args: [entries.map((e) => ({ target: e.claimed.asset as Address, allowFailure: true, callData: e.callData }))],
        }),
        gas: MULTICALL_BASE_GAS + SIMULATED_TRANSFER_GAS * BigInt(entries.length),
      };

  let sent: Extract<SendResult, { type: 'sent' | 'unknown' }> | undefined;
  for (let attempt = 1; !sent; attempt++) {
    const relayer = ctx.relayers.pick();
    let result: SendResult;
    try {
      result = await relayer.send(call, (txHash, relayerNonce) =>
        ctx.multicalls.record({ txHash, network: ctx.network, relayer: relayer.address, relayerNonce, memberIds }, clock.now()),
      );
    } catch (error) {
      if (error instanceof AlreadySent) {
        // Another instance's reconciler sent them (this process was taken for stopped): its batch decides.
        logger.warn('batch members already sent by another instance', { size: entries.length });
        const message = 'Sent by another instance; ask GET /settlements for the outcome';
        for (const e of entries) e.answer(settleFailure(e.who, { reason: REASONS.settlementPending, message }));
        return;
      }
      // Nothing was broadcast: the claims end here and the payers must sign anew.
      logger.error('batch settlement failed before broadcast', { error: safeError(error), size: entries.length });
      return failAll(REASONS.unexpectedSettleError, 'The settlement could not be submitted');
    }
    if (result.type === 'rejected') {
      const error = revertText(result.error);
      await ctx.multicalls.release(result.hash, error, clock.now());
      const retry = result.retryable && attempt < MAX_SEND_ATTEMPTS;
      logger.warn('relayer batch transaction refused', { tx: result.hash, relayer: relayer.address, error, retry });
      if (!retry) return failAll(REASONS.transactionFailed, `The node refused the transaction: ${error}`);
      continue;
    }
    sent = result;
  }
  broadcastOver();
  const hash = sent.hash;
  if (sent.type === 'unknown') logger.warn('relayer batch broadcast unconfirmed', { tx: hash, error: revertText(sent.error) });
  else for (const e of entries) if (e.early) e.answer({ success: true, transaction: hash, network: e.who.network, payer: e.who.payer });
  logger.debug('payment batch broadcast', { tx: hash, size: entries.length });

  // Callers still waiting get the receipt's outcome within the settle timeout; early answers were
  // given already, so their receipt is awaited as long as a broadcast settlement's.
  const onlyEarly = entries.every((e) => e.early && e.answered);
  const pending = (e: Entry) =>
    settleFailure(e.who, { reason: REASONS.settlementPending, message: 'Sent; the receipt was not seen in time' }, hash);
  try {
    const receipt = await waitForReceipt(
      ctx.client,
      hash,
      onlyEarly ? BACKGROUND_RECEIPT_TIMEOUT_MS : ctx.receiptTimeoutMs,
      ctx.pollIntervalMs,
      ctx.stopping,
    );
    if (!receipt) {
      for (const e of entries) e.answer(pending(e));
      return;
    }
    const outcome = await multicallOutcome(
      ctx.chain,
      receipt,
      entries.map((e) => e.claimed),
    );
    await ctx.multicalls.finalize(hash, outcome, clock.now());
    for (const [i, e] of entries.entries()) answerOutcome(ctx, e, hash, outcome.members[i] as AnsweredOutcome);
    logger.info('payment batch settled', {
      tx: hash,
      size: entries.length,
      settled: outcome.members.filter((m) => m.state === 'settled').length,
      block: outcome.blockNumber,
      gasUsed: outcome.gasUsed,
    });
  } catch (error) {
    // Sent, but the outcome could not be recorded: the reconciler will.
    logger.error('batch outcome not recorded', { tx: hash, error: safeError(error) });
    for (const e of entries) e.answer(pending(e));
  }
}

function answerOutcome(ctx: SettleContext, e: Entry, hash: Hex, outcome: AnsweredOutcome): void {
  const { who } = e;
  if (outcome.state === 'settled') {
    e.answer({ success: true, transaction: hash, network: who.network, payer: who.payer });
    return;
  }
  if (e.early) {
    const fields = { tx: hash, payer: who.payer, amount: e.claimed.amount, reason: outcome.reason };
    ctx.logger.warn('a broadcast settlement failed after its answer', fields);
  }
  const reason = outcome.reason ?? REASONS.transactionFailed;
  e.answer(settleFailure(who, { reason, message: outcome.message ?? 'The transfer failed' }, hash));
}
