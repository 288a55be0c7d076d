import { type AnvilClient, installRuntimeCode } from '../install-code';
import { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS } from './addresses';
import { PERMIT2_RUNTIME, UPTO_PROXY_RUNTIME } from './artifact';

/**
 * Places Permit2 and the x402 upto proxy at their canonical addresses (see installRuntimeCode:
 * neither has a constructor or immutables), keeping Permit2's spent nonces when its code is
 * replaced. Returns whether anything was written.
 */
export function installUpto(client: AnvilClient): Promise<{ installed: boolean }> {
  return installRuntimeCode(client, [
    [PERMIT2_ADDRESS, PERMIT2_RUNTIME],
    [UPTO_PROXY_ADDRESS, UPTO_PROXY_RUNTIME],
  ]);
}
