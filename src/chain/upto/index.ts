/**
 * The x402 `upto` contracts for local chains: Permit2.sol (the signature-transfer half of Permit2:
 * witness transfers, unordered nonces, deadlines) and x402UptoPermit2Proxy.sol (the spender that
 * settles an upto payment for at most its signed maximum), written from the scheme's specification
 * to the interface @x402/evm ships. Their ABIs, committed runtime code (scripts/upto-artifact.ts),
 * canonical addresses and installation on anvil.
 */
export { permit2Abi, uptoProxyAbi } from './abi';
export { PERMIT2_ADDRESS, UPTO_PROXY_ADDRESS } from './addresses';
export { PERMIT2_RUNTIME, UPTO_PROXY_RUNTIME } from './artifact';
export { installUpto } from './deploy';
