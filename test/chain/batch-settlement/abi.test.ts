/**
 * The compiled batch-settlement contracts against the interface the x402 reference package
 * (@x402/evm 2.27) ships and hard-codes: ABI items, selectors, addresses, EIP-712 domain and types.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import {
  BATCH_SETTLEMENT_ADDRESS as REFERENCE_ADDRESS,
  BATCH_SETTLEMENT_DOMAIN,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS as REFERENCE_COLLECTOR,
  claimBatchTypes as referenceClaimBatchTypes,
  refundTypes as referenceRefundTypes,
  voucherTypes as referenceVoucherTypes,
} from '@x402/evm';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { type Abi, type AbiFunction, getAddress, keccak256, toEventSelector, toFunctionSelector, toHex } from 'viem';
import {
  BATCH_SETTLEMENT_ADDRESS,
  BATCH_SETTLEMENT_RUNTIME,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_RUNTIME,
  MAX_WITHDRAW_DELAY,
  MIN_WITHDRAW_DELAY,
  batchSettlementAbi,
  batchSettlementDomain,
  channelIdOf,
  claimBatchTypes,
  erc3009DepositCollectorAbi,
  receiveWithAuthorizationTypes,
  refundTypes,
  voucherTypes,
} from '../../../src/chain/batch-settlement';
import { type LocalChain, compileContracts, startChain } from '../../support/chain';
import { abiSignatures } from '../../support/chain/abi-items';
import { x402EvmInternal } from '../../support/chain/x402-evm-internals';

let referenceAbi: Abi;
beforeAll(async () => {
  referenceAbi = await x402EvmInternal<Abi>('batchSettlementABI');
});

describe('x402BatchSettlement interface', () => {
  it('compiles to exactly the hand-written batchSettlementAbi and erc3009DepositCollectorAbi, item by item', async () => {
    const { x402BatchSettlement, ERC3009DepositCollector } = await compileContracts();
    expect(abiSignatures(batchSettlementAbi)).toEqual(abiSignatures(x402BatchSettlement.abi));
    expect(abiSignatures(erc3009DepositCollectorAbi)).toEqual(abiSignatures(ERC3009DepositCollector.abi));
  });

  it('contains every function and event of the ABI @x402/evm ships, with the same names, types and mutability', async () => {
    const { x402BatchSettlement } = await compileContracts();
    const compiled = abiSignatures(x402BatchSettlement.abi);
    const reference = abiSignatures(referenceAbi);
    expect(reference.length).toBe(19); // 18 functions and the Settled event in @x402/evm 2.27
    expect(reference.filter((item) => !compiled.includes(item))).toEqual([]);
  });

  it('dispatches every reference function selector in the committed runtime code and emits the reference Settled topic', () => {
    const functions = referenceAbi.filter((item): item is AbiFunction => item.type === 'function');
    const missing = functions.filter((f) => !BATCH_SETTLEMENT_RUNTIME.includes(`63${toFunctionSelector(f).slice(2)}`));
    expect(missing.map((f) => f.name)).toEqual([]);
    const settled = referenceAbi.find((item) => item.type === 'event' && item.name === 'Settled')!;
    expect(toEventSelector(settled as never)).toBe(
      toEventSelector('Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)'),
    );
    expect(BATCH_SETTLEMENT_RUNTIME.includes(toEventSelector(settled as never).slice(2))).toBe(true);
  });

  it('commits the runtime code solc produces (else run bun scripts/batch-settlement-artifact.ts)', async () => {
    const { x402BatchSettlement, ERC3009DepositCollector } = await compileContracts();
    expect(BATCH_SETTLEMENT_RUNTIME).toBe(x402BatchSettlement.deployedBytecode);
    expect(ERC3009_DEPOSIT_COLLECTOR_RUNTIME).toBe(ERC3009DepositCollector.deployedBytecode);
  });

  it('uses the addresses, EIP-712 domain, typed-data types and withdraw-delay bounds of @x402/evm', async () => {
    expect(BATCH_SETTLEMENT_ADDRESS).toBe(getAddress(REFERENCE_ADDRESS));
    expect(ERC3009_DEPOSIT_COLLECTOR_ADDRESS).toBe(getAddress(REFERENCE_COLLECTOR));
    expect(batchSettlementDomain(8453)).toEqual({ ...BATCH_SETTLEMENT_DOMAIN, chainId: 8453, verifyingContract: REFERENCE_ADDRESS });
    expect(voucherTypes).toEqual(referenceVoucherTypes);
    expect(refundTypes).toEqual(referenceRefundTypes);
    expect(claimBatchTypes).toEqual(referenceClaimBatchTypes);
    const config = {
      payer: '0x1111111111111111111111111111111111111111',
      payerAuthorizer: '0x2222222222222222222222222222222222222222',
      receiver: '0x3333333333333333333333333333333333333333',
      receiverAuthorizer: '0x4444444444444444444444444444444444444444',
      token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      withdrawDelay: 86_400,
      salt: keccak256(toHex('salt')),
    } as const;
    expect(channelIdOf(config, 8453)).toBe(computeChannelId(config, 8453));
    // Kept ids never answer for another config or chain: each field and the chain change the id.
    const variants = [
      { ...config, payer: '0x5555555555555555555555555555555555555555' },
      { ...config, payerAuthorizer: '0x0000000000000000000000000000000000000000' },
      { ...config, receiver: '0x6666666666666666666666666666666666666666' },
      { ...config, receiverAuthorizer: '0x7777777777777777777777777777777777777777' },
      { ...config, token: '0x8888888888888888888888888888888888888888' },
      { ...config, withdrawDelay: 86_401 },
      { ...config, salt: keccak256(toHex('another salt')) },
    ] as const;
    for (const chainId of [8453, 84532])
      for (const variant of [config, ...variants]) {
        expect(channelIdOf(variant, chainId)).toBe(computeChannelId(variant, chainId));
        expect(channelIdOf(variant, chainId)).toBe(computeChannelId(variant, chainId));
      }
    expect(receiveWithAuthorizationTypes).toEqual(await x402EvmInternal('receiveAuthorizationTypes'));
    expect([MIN_WITHDRAW_DELAY, MAX_WITHDRAW_DELAY]).toEqual([
      await x402EvmInternal('MIN_WITHDRAW_DELAY'),
      await x402EvmInternal('MAX_WITHDRAW_DELAY'),
    ]);
  });
});

describe('x402BatchSettlement on the test chain', () => {
  let chain: LocalChain;
  beforeAll(async () => {
    chain = await startChain();
  });
  afterAll(() => chain.stop());

  const read = <F extends 'CHANNEL_CONFIG_TYPEHASH' | 'MIN_WITHDRAW_DELAY' | 'MAX_WITHDRAW_DELAY'>(functionName: F) =>
    chain.publicClient.readContract({ address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi, functionName });

  it('sits at the canonical addresses with the committed runtime code', async () => {
    expect(await chain.publicClient.getCode({ address: BATCH_SETTLEMENT_ADDRESS })).toBe(BATCH_SETTLEMENT_RUNTIME);
    expect(await chain.publicClient.getCode({ address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS })).toBe(ERC3009_DEPOSIT_COLLECTOR_RUNTIME);
    expect(
      await chain.publicClient.readContract({
        address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
        abi: erc3009DepositCollectorAbi,
        functionName: 'BATCH_SETTLEMENT',
      }),
    ).toBe(BATCH_SETTLEMENT_ADDRESS);
  });

  it('answers the reference CHANNEL_CONFIG_TYPEHASH and the 15 minute to 30 day withdraw-delay bounds', async () => {
    expect(await read('CHANNEL_CONFIG_TYPEHASH')).toBe(
      keccak256(
        toHex(
          'ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,address token,uint40 withdrawDelay,bytes32 salt)',
        ),
      ),
    );
    expect([await read('MIN_WITHDRAW_DELAY'), await read('MAX_WITHDRAW_DELAY')]).toEqual([15 * 60, 30 * 24 * 3600]);
  });
});
