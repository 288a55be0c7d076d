/**
 * The `batch-settlement` scheme (payment channels on x402BatchSettlement) as the facilitator
 * speaks it: `/verify` of deposit, voucher and refund payloads (the channel snapshot in `extra`),
 * `/settle` of deposit, claim, settle and completed refund payloads, and its `/supported` kind,
 * which advertises our receiver authorizer. Malformed payloads answer the spec's reason codes. It is
 * offered only on a chain holding x402BatchSettlement and its deposit collector (`missingOnChain`).
 * Started, it resumes at once, then periodically, the operations a stopped process left unsent.
 */
import type { Address, Hex, PublicClient } from 'viem';
import {
  BATCH_SETTLEMENT_REASONS as R,
  BATCH_SETTLEMENT_SCHEME,
  BatchSettlementPayloadError,
  parseBatchClientPayload,
  parseBatchSettlePayload,
  type BatchClientPayload,
  type BatchSettlePayload,
  type VoucherClaim,
} from 'skill-market/x402';
import { missingChannelContracts, missingText } from '../../../chain/batch-settlement';
import type { Database } from '../../../db';
import type { Logger } from '../../../log';
import type { RelayerPool } from '../../relayer';
import type { FacilitatorScheme } from '../../scheme';
import type { Clock } from '../../types';
import type { ReceiverKey } from '../../../config';
import { createReceiverAuthorizer } from './authorizer';
import { createReceiverKeys } from './receiver-keys';
import { createClaimBatcher } from './claim-batcher';
import { highestPerChannel } from './claim-checks';
import { simulate, claimCall } from './contract';
import { parseChannelRequest, type ChannelRequest } from './request';
import { createChannelResume, type ResumeReport } from './resume';
import { createChannelSender, type SendOutcome } from './sender';
import { failure, sendClaim, settleClaim, settleRefund, settleSweep, type ChannelSettleContext } from './settle';
import { createChannelStore } from './store';
import type { ChannelSettleResponse, ChannelVerifyResponse } from './types';
import { settleDeposit, verifyPayment } from './verify';

export interface ChannelSchemeDeps {
  db: Database;
  network: string;
  chainId: number;
  client: PublicClient;
  relayers: RelayerPool;
  assets: readonly Address[];
  /** The receiver authorizer's key: never logged, never answered. */
  authorizerPrivateKey: Hex;
  /** Keys bound to receivers: their consent to the claims and refunds our authorizer signs. Never logged. */
  receiverKeys?: readonly ReceiverKey[];
  /** Our authorizer signs claims for anyone, without a receiver's key (refunds still need one); default false. */
  open?: boolean;
  clock: Clock;
  logger: Logger;
  receiptTimeoutMs: number;
  pollIntervalMs: number;
  stopping: AbortSignal;
  /** How long a claim our authorizer signs waits for others to share its transaction; default 100 ms. */
  claimWindowMs?: number;
  /** Most voucher rows in one claim transaction; default 100. */
  claimMaxRows?: number;
  /** Runs the resume pass beside the requests; the facilitator's stop waits for it. */
  background(task: () => Promise<unknown>): void;
  /** How often the resume pass runs once started. */
  resumeIntervalMs: number;
}

export interface ChannelScheme extends FacilitatorScheme {
  /** One pass over operations not final (sends what a stopped process recorded but never broadcast). */
  resume(): Promise<ResumeReport>;
}

export function createChannelScheme(deps: ChannelSchemeDeps): ChannelScheme {
  const store = createChannelStore(deps.db);
  const log = deps.logger.child({ scheme: BATCH_SETTLEMENT_SCHEME });
  const sender = createChannelSender({ ...deps, store, logger: log });
  const authorizer = createReceiverAuthorizer(deps.authorizerPrivateKey, deps.chainId);
  const ctx: ChannelSettleContext = {
    network: deps.network,
    chainId: deps.chainId,
    client: deps.client,
    store,
    sender,
    authorizer,
    receiverKeys: createReceiverKeys(deps.receiverKeys ?? []),
    open: deps.open ?? false,
    assets: new Set(deps.assets.map((a) => a.toLowerCase())),
    simulateFrom: deps.relayers.addresses[0] as Address,
    now: () => deps.clock.now(),
  };
  // Requests queued together go out as one transaction, each channel in it once.
  const distinct = (claims: readonly VoucherClaim[]) => highestPerChannel(claims, deps.chainId);
  const batcher = createClaimBatcher<SendOutcome>(
    { windowMs: deps.claimWindowMs ?? 100, maxRows: deps.claimMaxRows ?? 100 },
    async (claims) => {
      const rows = distinct(claims);
      return simulate(deps.client, ctx.simulateFrom, claimCall(rows, await authorizer.signClaims(rows)));
    },
    async (claims) => {
      const rows = distinct(claims);
      return sendClaim(ctx, rows, await authorizer.signClaims(rows));
    },
  );
  const resume = createChannelResume({
    store,
    sender,
    client: deps.client,
    relayers: deps.relayers,
    clock: deps.clock,
    logger: log,
    startedAt: deps.clock.now(),
  });

  /** Why the request's network or scheme is not this facilitator's, if so. */
  const mismatch = (request: ChannelRequest) => {
    if (request.accepted.scheme !== BATCH_SETTLEMENT_SCHEME)
      return { reason: R.scheme, message: 'paymentPayload.accepted.scheme is not batch-settlement' };
    if (request.accepted.network !== request.requirements.network || request.requirements.network !== deps.network) {
      return { reason: R.networkMismatch, message: `This facilitator settles ${deps.network}` };
    }
    return undefined;
  };
  const parsed = <T>(parse: () => T): T | { reason: string; message: string } => {
    try {
      return parse();
    } catch (error) {
      if (error instanceof BatchSettlementPayloadError) return { reason: error.reason, message: error.message };
      throw error;
    }
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  const resumeInBackground = () => deps.background(() => resume.runOnce());

  return {
    id: BATCH_SETTLEMENT_SCHEME,
    kinds: [{ x402Version: 2, scheme: BATCH_SETTLEMENT_SCHEME, network: deps.network, extra: { receiverAuthorizer: authorizer.address } }],
    signers: { 'eip155:*': [...deps.relayers.addresses] },

    /** `POST /verify`: throws FacilitatorRequestError on a malformed body. */
    async verify(body): Promise<ChannelVerifyResponse> {
      const request = parseChannelRequest(body);
      const wrong = mismatch(request);
      if (wrong) return { isValid: false, invalidReason: wrong.reason, invalidMessage: wrong.message };
      const payload = parsed<BatchClientPayload>(() => parseBatchClientPayload(request.payload));
      if ('reason' in payload) return { isValid: false, invalidReason: payload.reason, invalidMessage: payload.message };
      return verifyPayment(ctx, payload, request.requirements);
    },

    /**
     * `POST /settle`: throws FacilitatorRequestError on a malformed body. `bearer` is the caller's
     * `Authorization: Bearer` token: a refund our authorizer signs needs a key bound to the receiver,
     * and so does a claim it signs, unless the facilitator is open.
     */
    async settle(body, { bearer }): Promise<ChannelSettleResponse> {
      const request = parseChannelRequest(body);
      const wrong = mismatch(request);
      if (wrong) return failure(deps.network, wrong);
      const payload = parsed<BatchSettlePayload>(() => parseBatchSettlePayload(request.payload));
      if ('reason' in payload) return failure(deps.network, payload);
      switch (payload.type) {
        case 'deposit':
          return settleDeposit(ctx, payload, request.requirements);
        case 'claim':
          return settleClaim(ctx, payload, batcher, bearer);
        case 'settle':
          return settleSweep(ctx, payload);
        case 'refund':
          return settleRefund(ctx, payload, bearer);
      }
    },

    async missingOnChain() {
      const missing = await missingChannelContracts(deps.client);
      if (missing.length === 0) return undefined;
      return `${missingText(missing)} on ${deps.network}: payment channels cannot be paid there`;
    },

    resume: () => resume.runOnce(),
    start() {
      resumeInBackground(); // at once: a restart sends what its predecessor recorded but never broadcast
      timer ??= setInterval(resumeInBackground, deps.resumeIntervalMs);
      timer.unref?.();
    },
    /** Sends the claims waiting for their window and stops the resume timer. */
    drain() {
      batcher.drain();
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
