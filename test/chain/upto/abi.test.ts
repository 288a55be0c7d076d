/**
 * The compiled upto contracts against the interface the x402 reference package (@x402/evm 2.27)
 * ships and hard-codes: the proxy's ABI items, addresses, the witness type string, and the EIP-712
 * types and domain its client signs.
 */
import { describe, expect, it } from 'bun:test';
import {
  PERMIT2_ADDRESS as REFERENCE_PERMIT2,
  uptoPermit2WitnessTypes,
  x402UptoPermit2ProxyABI,
  x402UptoPermit2ProxyAddress,
} from '@x402/evm';
import { type Abi, type AbiFunction, hashTypedData, keccak256, toFunctionSelector, toHex } from 'viem';
import { UPTO_PERMIT_TYPES, permit2Domain, uptoTypedData, type UptoAuthorization } from 'skill-market/x402';
import {
  PERMIT2_ADDRESS,
  PERMIT2_RUNTIME,
  UPTO_PROXY_ADDRESS,
  UPTO_PROXY_RUNTIME,
  permit2Abi,
  uptoProxyAbi,
} from '../../../src/chain/upto';
import { compileContracts } from '../../support/chain';
import { abiSignatures } from '../../support/chain/abi-items';

describe('x402UptoPermit2Proxy and Permit2 interface', () => {
  it('compile to exactly the hand-written uptoProxyAbi and permit2Abi, item by item, and to the committed runtime code', async () => {
    const { x402UptoPermit2Proxy, Permit2 } = await compileContracts();
    expect(abiSignatures(uptoProxyAbi)).toEqual(abiSignatures(x402UptoPermit2Proxy.abi));
    expect(abiSignatures(permit2Abi)).toEqual(abiSignatures(Permit2.abi));
    expect(x402UptoPermit2Proxy.deployedBytecode).toBe(UPTO_PROXY_RUNTIME);
    expect(Permit2.deployedBytecode).toBe(PERMIT2_RUNTIME);
  });

  it('has every item of the proxy ABI @x402/evm ships, and dispatches every one of its selectors', async () => {
    const { x402UptoPermit2Proxy } = await compileContracts();
    const reference = abiSignatures(x402UptoPermit2ProxyABI as Abi);
    expect(reference.length).toBe(15); // 5 functions, 2 events, 8 errors in @x402/evm 2.27
    expect(reference.filter((item) => !abiSignatures(x402UptoPermit2Proxy.abi).includes(item))).toEqual([]);
    const functions = (x402UptoPermit2ProxyABI as Abi).filter((item): item is AbiFunction => item.type === 'function');
    expect(functions.filter((f) => !UPTO_PROXY_RUNTIME.includes(`63${toFunctionSelector(f).slice(2)}`)).map((f) => f.name)).toEqual([]);
  });

  it('sits at the addresses @x402/evm hard-codes', () => {
    expect(PERMIT2_ADDRESS).toBe(REFERENCE_PERMIT2);
    expect(UPTO_PROXY_ADDRESS).toBe(x402UptoPermit2ProxyAddress);
  });

  it('signs the typed data @x402/evm signs, and the proxy hashes the witness type @x402/evm names', async () => {
    expect(UPTO_PERMIT_TYPES).toEqual(uptoPermit2WitnessTypes);
    const authorization: UptoAuthorization = {
      from: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
      permitted: { token: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', amount: '5000000' },
      spender: UPTO_PROXY_ADDRESS,
      nonce: '123456789',
      deadline: '1740672154',
      witness: {
        to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        facilitator: '0x1111111111111111111111111111111111111111',
        validAfter: '0',
      },
    };
    const ours = uptoTypedData(authorization, 84532);
    const theirs = hashTypedData({
      domain: { name: 'Permit2', chainId: 84532, verifyingContract: REFERENCE_PERMIT2 },
      types: uptoPermit2WitnessTypes,
      primaryType: 'PermitWitnessTransferFrom',
      message: ours.message,
    });
    expect(hashTypedData(ours)).toBe(theirs);
    expect(permit2Domain(84532)).toEqual({ name: 'Permit2', chainId: 84532, verifyingContract: PERMIT2_ADDRESS });
    // The proxy's WITNESS_TYPEHASH is the hash of the Witness type as EIP-712 encodes it.
    expect(UPTO_PROXY_RUNTIME).toContain(keccak256(toHex('Witness(address to,address facilitator,uint256 validAfter)')).slice(2));
  });
});
