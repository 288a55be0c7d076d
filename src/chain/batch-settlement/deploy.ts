import { type AnvilClient, installRuntimeCode } from '../install-code';
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from './addresses';
import { BATCH_SETTLEMENT_RUNTIME, ERC3009_DEPOSIT_COLLECTOR_RUNTIME } from './artifact';

/**
 * Places x402BatchSettlement and its ERC-3009 deposit collector at their canonical addresses (see
 * installRuntimeCode: neither has a constructor or immutables). Returns whether anything was written.
 */
export function installBatchSettlement(client: AnvilClient): Promise<{ installed: boolean }> {
  return installRuntimeCode(client, [
    [BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_RUNTIME],
    [ERC3009_DEPOSIT_COLLECTOR_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_RUNTIME],
  ]);
}
