/**
 * The voucher check a skill server runs on every channel call: the same verdict as recovering the
 * signer from the EIP-712 typed data with viem, for a signer's first voucher (recovery) and its
 * later ones (checked against its kept public key), and a refusal of anything the contract's
 * ecrecover would not attribute to the signer (another amount or chain, the other v, high s).
 */
import { describe, expect, it } from 'bun:test';
import { hashTypedData, type Hex, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { voucherSignedBy } from 'skill-market/creator';
import { batchSettlementDomain, voucherDigest, voucherTypes } from 'skill-market/x402';

const channelId = `0x${'ab'.repeat(32)}` as Hex;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const typed = (amount: bigint, chainId = 31337) => ({
  domain: batchSettlementDomain(chainId),
  types: voucherTypes,
  primaryType: 'Voucher' as const,
  message: { channelId, maxClaimableAmount: amount },
});

describe('voucher signatures', () => {
  it('hashes a voucher as EIP-712 does', () => {
    expect(voucherDigest(channelId, 123_456n, 8453)).toBe(hashTypedData(typed(123_456n, 8453)));
  });

  it("accepts the signer's vouchers, first and later, and refuses every altered one", async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    for (let i = 1n; i <= 4n; i++) {
      const amount = i * 1000n;
      const signature = await payer.signTypedData(typed(amount));
      const otherV = `${signature.slice(0, 130)}${signature.endsWith('1b') ? '1c' : '1b'}` as Hex;
      const s = BigInt(`0x${signature.slice(66, 130)}`);
      const highS = `${signature.slice(0, 66)}${(N - s).toString(16).padStart(64, '0')}${signature.endsWith('1b') ? '1c' : '1b'}` as Hex;
      expect(voucherSignedBy(channelId, amount, 31337, signature, payer.address)).toBe(true);
      expect(voucherSignedBy(channelId, amount + 1n, 31337, signature, payer.address)).toBe(false);
      expect(voucherSignedBy(channelId, amount, 8453, signature, payer.address)).toBe(false);
      expect(voucherSignedBy(channelId, amount, 31337, otherV, payer.address)).toBe(false);
      expect(voucherSignedBy(channelId, amount, 31337, highS, payer.address)).toBe(false);
      expect(voucherSignedBy(channelId, amount, 31337, signature, other.address)).toBe(false);
      expect(voucherSignedBy(channelId, amount, 31337, await other.signTypedData(typed(amount)), payer.address)).toBe(false);
      expect(voucherSignedBy(channelId, amount, 31337, '0x1234', payer.address)).toBe(false);
    }
  });

  it('gives the verdict of recovery on many vouchers of signers it keeps, whatever their amounts', async () => {
    const signers = [privateKeyToAccount(generatePrivateKey()), privateKeyToAccount(generatePrivateKey())];
    const flipV = (signature: Hex) => `${signature.slice(0, 130)}${signature.endsWith('1b') ? '1c' : '1b'}` as Hex;
    // Each voucher's digest makes two new scalars, so 60 vouchers meet every kind of signed window digit.
    for (let i = 0; i < 60; i++) {
      const signer = signers[i % 2]!;
      const amount = (BigInt(i + 1) * 0x9e3779b97f4a7c15f39cc0605cedc835n) % (1n << 128n);
      const signature = await signer.signTypedData(typed(amount));
      const recovered = await recoverTypedDataAddress({ ...typed(amount), signature });
      expect(recovered).toBe(signer.address);
      expect(voucherSignedBy(channelId, amount, 31337, signature, signer.address)).toBe(true);
      expect(voucherSignedBy(channelId, amount, 31337, flipV(signature), signer.address)).toBe(false);
      expect(voucherSignedBy(channelId, amount, 31337, signature, signers[(i + 1) % 2]!.address)).toBe(false);
    }
  });
});
