/**
 * Where Permit2 and the x402 upto proxy live: the same addresses on Base (and every chain they are
 * deployed on) and on our local chains, so clients that hard-code them (as @x402/evm does, inside
 * every signed authorization) work unchanged. Their home is the SDK (skill-market/x402).
 */
export { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS } from 'skill-market/x402';
