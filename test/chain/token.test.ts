import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { type Hash, encodeAbiParameters, keccak256, parseAbiParameters, toHex } from 'viem';
import { type LocalChain, startChain, usdCoinAbi } from '../support/chain';

let chain: LocalChain;
beforeAll(async () => {
  chain = await startChain();
});
afterAll(() => chain.stop());

const read = <F extends 'name' | 'symbol' | 'version' | 'decimals' | 'totalSupply' | 'DOMAIN_SEPARATOR' | 'owner'>(functionName: F) =>
  chain.publicClient.readContract({ address: chain.token.address, abi: usdCoinAbi, functionName });

describe('UsdCoin token', () => {
  it('deploys as USD Coin / USDC, EIP-712 version 2, 6 decimals, owned by the deployer', async () => {
    expect(await read('name')).toBe('USD Coin');
    expect(await read('symbol')).toBe('USDC');
    expect(await read('version')).toBe('2');
    expect(await read('decimals')).toBe(6);
    expect(await read('owner')).toBe(chain.accounts.deployer.address);
    expect(chain.token).toEqual({ address: chain.token.address, name: 'USD Coin', symbol: 'USDC', version: '2', decimals: 6 });
  });

  it('has the EIP-712 domain separator of name, version, current chain id and its address', async () => {
    const expected = keccak256(
      encodeAbiParameters(parseAbiParameters('bytes32, bytes32, bytes32, uint256, address'), [
        keccak256(toHex('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)')),
        keccak256(toHex('USD Coin')),
        keccak256(toHex('2')),
        84532n,
        chain.token.address,
      ]),
    );
    expect(await read('DOMAIN_SEPARATOR')).toBe(expected);
    expect(chain.domain).toEqual({ name: 'USD Coin', version: '2', chainId: 84532, verifyingContract: chain.token.address });
  });

  it('starts every payer and the smart wallet with 1,000 USDC and payees with none', async () => {
    for (const payer of chain.accounts.payers) expect(await chain.balanceOf(payer.address)).toBe(1_000_000_000n);
    expect(await chain.balanceOf(chain.smartWallet.address)).toBe(1_000_000_000n);
    for (const payee of chain.accounts.payees) expect(await chain.balanceOf(payee.address)).toBe(0n);
  });

  it('mints only for the owner and counts minted tokens in totalSupply', async () => {
    const before = await read('totalSupply');
    const account = await chain.createAccount({ usdc: 5_000_000n });
    expect(await chain.balanceOf(account.address)).toBe(5_000_000n);
    expect(await read('totalSupply')).toBe(before + 5_000_000n);
    await expect(
      chain.walletClient(account).writeContract({
        address: chain.token.address,
        abi: usdCoinAbi,
        functionName: 'mint',
        args: [account.address, 1n],
      }),
    ).rejects.toThrow('FiatToken: caller is not a minter');
  });

  it('serializes concurrent mints from the one deployer', async () => {
    const account = await chain.createAccount();
    await Promise.all(Array.from({ length: 5 }, () => chain.mint(account.address, 1_000n)));
    expect(await chain.balanceOf(account.address)).toBe(5_000n);
  });

  it('transfers, approves and transfers from with ERC-20 semantics and texts', async () => {
    const alice = await chain.createAccount({ usdc: 100n });
    const bob = await chain.createAccount();
    const token = { address: chain.token.address, abi: usdCoinAbi } as const;
    const allowance = () => chain.publicClient.readContract({ ...token, functionName: 'allowance', args: [alice.address, bob.address] });
    const mined = async (hash: Promise<Hash>) =>
      expect((await chain.publicClient.waitForTransactionReceipt({ hash: await hash })).status).toBe('success');

    await mined(chain.walletClient(alice).writeContract({ ...token, functionName: 'transfer', args: [bob.address, 40n] }));
    expect([await chain.balanceOf(alice.address), await chain.balanceOf(bob.address)]).toEqual([60n, 40n]);
    await expect(chain.walletClient(alice).writeContract({ ...token, functionName: 'transfer', args: [bob.address, 61n] })).rejects.toThrow(
      'ERC20: transfer amount exceeds balance',
    );

    await mined(chain.walletClient(alice).writeContract({ ...token, functionName: 'approve', args: [bob.address, 10n] }));
    expect(await allowance()).toBe(10n);
    const pull = (value: bigint) =>
      chain.walletClient(bob).writeContract({ ...token, functionName: 'transferFrom', args: [alice.address, bob.address, value] });
    await expect(pull(11n)).rejects.toThrow('ERC20: transfer amount exceeds allowance');
    await mined(pull(10n));
    expect(await chain.balanceOf(alice.address)).toBe(50n);
    expect(await allowance()).toBe(0n);
  });
});
