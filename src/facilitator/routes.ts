import { createHash, timingSafeEqual } from 'node:crypto';
import { Elysia, t } from 'elysia';
import { BaseError, getAddress, type Hex } from 'viem';
import {
  FacilitatorRequestSchema,
  normalizeNetwork,
  PaymentReceiptSchema,
  BatchReceiptSchema,
  SETTLEMENT_MODE_HEADER,
  SETTLEMENT_MODES,
  type SettlementMode,
  SettleResponseSchema,
  SettlementStatusSchema,
  SettlementQuerySchema,
  SettlementsAnswerSchema,
  MAX_SETTLEMENT_QUERY,
  SupportedResponseSchema,
  VerifyResponseSchema,
  ADDRESS_PATTERN,
  BYTES32_PATTERN,
} from 'skill-market/x402';
import type { ReceiverKey } from '../config';
import type { Logger } from '../log';
import { AppError } from '../http';
import type { FacilitatorService } from './service';
import { safeError } from './chain';
import { FacilitatorRequestError } from './request';
import type { AuthorizationKey } from './types';

/**
 * A malformed request body is the caller's fault: 400, as the reference facilitators answer. A
 * chain (RPC) failure is 503, logged without viem's full message (it repeats the calldata).
 */
function answer(logger: Logger) {
  return async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof FacilitatorRequestError) throw new AppError('VALIDATION', error.message);
      if (error instanceof BaseError) {
        logger.error('chain request failed', { error: safeError(error) });
        throw new AppError('UNAVAILABLE', 'The facilitator cannot reach its chain right now');
      }
      throw error;
    }
  };
}

/**
 * The standard facilitator endpoints plus receipts and settlement outcomes. Valid and invalid payments alike answer 200
 * (the verdict is in the body); only a body that is not a facilitator request answers 400.
 */
export function facilitatorRoutes(
  service: FacilitatorService,
  logger: Logger,
  prefix = '',
  apiKeys: readonly string[] = [],
  receiverKeys: readonly ReceiverKey[] = [],
) {
  const guarded = answer(logger);
  // A key bound to a receiver is a key to this facilitator too (one Authorization header carries both).
  const allowed = apiKeys.length === 0 ? [] : [...apiKeys, ...receiverKeys.map((r) => r.key)].map(digest);
  // With FACILITATOR_API_KEYS set, only holders of a key may spend the relayer's gas.
  const requireKey = ({ headers }: { headers: Record<string, string | undefined> }) => {
    if (allowed.length === 0) return;
    const presented = bearerOf(headers);
    if (!presented) throw new AppError('UNAUTHORIZED', 'Authentication required');
    const hash = digest(presented);
    if (!allowed.some((key) => timingSafeEqual(key, hash))) throw new AppError('UNAUTHORIZED', 'Invalid token');
  };
  const tags = ['Facilitator'];
  return new Elysia({ prefix })
    .get('/supported', () => service.supported(), {
      response: SupportedResponseSchema,
      detail: { tags, summary: 'The (x402Version, scheme, network) kinds settled here and the relayer addresses' },
    })
    .post('/verify', ({ body }) => guarded(() => service.verify(body)), {
      beforeHandle: requireKey,
      body: FacilitatorRequestSchema,
      response: VerifyResponseSchema,
      detail: { tags, summary: 'Checks a payment without moving money; valid and invalid payments both answer 200' },
    })
    .post(
      '/settle',
      ({ body, headers }) =>
        guarded(() => service.settle(body, { mode: settlementMode(headers[SETTLEMENT_MODE_HEADER]), bearer: bearerOf(headers) })),
      {
        beforeHandle: requireKey,
        body: FacilitatorRequestSchema,
        response: SettleResponseSchema,
        detail: {
          tags,
          summary:
            'Moves the money: one transferWithAuthorization per payment, once; header X-Settlement-Mode: confirmed (answer once mined) or broadcast (once the node accepted it)',
        },
      },
    )
    .get(
      '/receipts/:tx',
      async ({ params }) => {
        if (!BYTES32_PATTERN.test(params.tx))
          throw new AppError('VALIDATION', 'Invalid request: tx must be a transaction hash (0x + 64 hex)');
        const receipt = await service.receipt(params.tx);
        if (!receipt) throw new AppError('NOT_FOUND', 'No settlement with this transaction hash');
        return receipt;
      },
      {
        response: t.Union([PaymentReceiptSchema, BatchReceiptSchema]),
        detail: { tags, summary: "A settlement transaction as stored: one payment's, or a batch's with each payment's outcome" },
      },
    )
    .get(
      '/settlements/:network/:asset/:payer/:nonce',
      async ({ params }) => {
        const key = settlementKey(params);
        const status = await guarded(() => service.settlement(key));
        if (!status) throw new AppError('NOT_FOUND', 'This facilitator never accepted this authorization');
        return status;
      },
      {
        response: SettlementStatusSchema,
        detail: { tags, summary: 'What became of one authorization: for a resource server that lost the answer of /settle' },
      },
    )
    .post(
      '/settlements',
      async ({ body }) => {
        const keys = body.authorizations.map(settlementKey);
        return { settlements: await guarded(() => service.settlements(keys)) };
      },
      {
        body: SettlementQuerySchema,
        response: SettlementsAnswerSchema,
        detail: {
          tags,
          summary: `What became of up to ${MAX_SETTLEMENT_QUERY} authorizations at once, in order (null: never accepted here)`,
        },
      },
    );
}

/** The mode a resource server asks for; undefined (the configured mode) when absent. */
function settlementMode(value: string | undefined): SettlementMode | undefined {
  if (value === undefined) return undefined;
  const mode = value.trim().toLowerCase();
  if (!(SETTLEMENT_MODES as readonly string[]).includes(mode)) {
    throw new AppError('VALIDATION', `Invalid request: ${SETTLEMENT_MODE_HEADER} must be one of ${SETTLEMENT_MODES.join(', ')}`);
  }
  return mode as SettlementMode;
}

/** The single-use key named by a settlements path, normalized as the ledger stores it. */
function settlementKey(params: { network: string; asset: string; payer: string; nonce: string }): AuthorizationKey {
  let network: string;
  try {
    network = normalizeNetwork(decodeURIComponent(params.network));
  } catch {
    throw new AppError('VALIDATION', 'Invalid request: network must be a CAIP-2 id such as eip155:8453');
  }
  if (!ADDRESS_PATTERN.test(params.asset) || !ADDRESS_PATTERN.test(params.payer))
    throw new AppError('VALIDATION', 'Invalid request: asset and payer must be addresses (0x + 40 hex)');
  if (!BYTES32_PATTERN.test(params.nonce)) throw new AppError('VALIDATION', 'Invalid request: nonce must be 0x + 64 hex');
  return {
    network,
    asset: getAddress(params.asset.toLowerCase()),
    payer: getAddress(params.payer.toLowerCase()),
    nonce: params.nonce.toLowerCase() as Hex,
  };
}

const digest = (key: string) => createHash('sha256').update(key).digest();

/** The token of `Authorization: Bearer <token>`, if any. */
const bearerOf = (headers: Record<string, string | undefined>) => /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
