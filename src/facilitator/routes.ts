import { createHash, timingSafeEqual } from 'node:crypto';
import { Elysia } from 'elysia';
import { BaseError } from 'viem';
import type { Logger } from '../log';
import { AppError } from '../registry/errors';
import { safeError } from './chain';
import { FacilitatorRequestError } from './request';
import type { FacilitatorService } from './service';

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

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
 * The standard facilitator endpoints plus receipts. Valid and invalid payments alike answer 200
 * (the verdict is in the body); only a body that is not a facilitator request answers 400.
 */
export function facilitatorRoutes(service: FacilitatorService, logger: Logger, prefix = '', apiKeys: readonly string[] = []) {
  const guarded = answer(logger);
  const allowed = apiKeys.map(digest);
  // With FACILITATOR_API_KEYS set, only holders of a key may spend the relayer's gas.
  const requireKey = ({ headers }: { headers: Record<string, string | undefined> }) => {
    if (allowed.length === 0) return;
    const presented = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1];
    if (!presented) throw new AppError('UNAUTHORIZED', 'Authentication required');
    const hash = digest(presented);
    if (!allowed.some((key) => timingSafeEqual(key, hash))) throw new AppError('UNAUTHORIZED', 'Invalid token');
  };
  return new Elysia({ prefix })
    .get('/supported', () => service.supported())
    .post('/verify', ({ body }) => guarded(() => service.verify(body)), { beforeHandle: requireKey })
    .post('/settle', ({ body }) => guarded(() => service.settle(body)), { beforeHandle: requireKey })
    .get('/receipts/:tx', async ({ params }) => {
      if (!TX_HASH.test(params.tx)) throw new AppError('VALIDATION', 'Invalid request: tx must be a transaction hash (0x + 64 hex)');
      const receipt = await service.receipt(params.tx);
      if (!receipt) throw new AppError('NOT_FOUND', 'No settlement with this transaction hash');
      return receipt;
    });
}

const digest = (key: string) => createHash('sha256').update(key).digest();
