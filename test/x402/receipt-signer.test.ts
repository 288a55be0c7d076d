/**
 * The check of a receipt's signer (receiptProblem) gives recovery's verdict whether the listed
 * signer is new, kept, or kept with its key's multiples (from its 64th check): valid for the key's
 * receipts (a high-s signature too, which recovery accepts), refused naming the recovered signer
 * for another key, the other recovery bit, or an altered receipt.
 */
import { describe, expect, it } from 'bun:test';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { bodyDigest, receiptProblem, receiptSignerOf, signSkillReceipt, type SkillReceiptPayload } from 'skill-market/x402';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const flipV = (signature: Hex) => `${signature.slice(0, 130)}${signature.endsWith('1b') ? '1c' : '1b'}` as Hex;
const highS = (signature: Hex) => {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  return `${signature.slice(0, 66)}${(N - s).toString(16).padStart(64, '0')}${signature.endsWith('1b') ? '1c' : '1b'}` as Hex;
};

const payload = (i: number, payer: `0x${string}`): SkillReceiptPayload => ({
  version: 1,
  resourceUrl: 'https://skills.example/echo',
  skill: 'echo',
  network: 'eip155:8453',
  scheme: 'exact',
  payer,
  amount: String(1000 + i),
  transaction: `0x${i.toString(16).padStart(64, '0')}`,
  cumulativeAmount: '0',
  issuedAt: 1_800_000_000 + i,
  bodyDigest: bodyDigest(`answer ${i}`),
});

describe('the receipt signer check', () => {
  it('gives recovery’s verdict on many receipts of kept signers, before and after their multiples are made', async () => {
    const signers = [privateKeyToAccount(generatePrivateKey()), privateKeyToAccount(generatePrivateKey())];
    const payer = privateKeyToAccount(generatePrivateKey()).address;
    for (let i = 0; i < 90; i++) {
      const key = signers[i % 2]!;
      const other = signers[(i + 1) % 2]!;
      const signed = await signSkillReceipt(key, payload(i, payer));
      expect(await receiptProblem(signed, { signer: key.address })).toBeUndefined();
      expect(await receiptProblem(signed, { signer: key.address.toLowerCase() })).toBeUndefined();

      const high = { ...signed, signature: highS(signed.signature) };
      expect(await receiptSignerOf(high)).toBe(key.address);
      expect(await receiptProblem(high, { signer: key.address })).toBeUndefined();

      const flipped = { ...signed, signature: flipV(signed.signature) };
      const flippedSigner = await receiptSignerOf(flipped);
      expect(await receiptProblem(flipped, { signer: key.address })).toBe(
        `the receipt is signed by ${flippedSigner}, not the listed receipt signer ${key.address}`,
      );
      expect(await receiptProblem(signed, { signer: other.address })).toBe(
        `the receipt is signed by ${key.address}, not the listed receipt signer ${other.address}`,
      );
      const altered = { ...signed, payload: { ...signed.payload, amount: String(999 + i) } };
      expect(await receiptProblem(altered, { signer: key.address })).toBe(
        `the receipt is signed by ${await receiptSignerOf(altered)}, not the listed receipt signer ${key.address}`,
      );
    }
  });

  it('refuses a signature that cannot be read: another length, a recovery bit of 2, r of zero', async () => {
    const key = privateKeyToAccount(generatePrivateKey());
    const signed = await signSkillReceipt(key, payload(1, key.address));
    await receiptProblem(signed, { signer: key.address });
    for (const signature of [
      signed.signature.slice(0, 128),
      `${signed.signature.slice(0, 130)}1d`,
      `0x${'0'.repeat(64)}${signed.signature.slice(66)}`,
    ])
      expect(await receiptProblem({ ...signed, signature: signature as Hex }, { signer: key.address })).toBe(
        'the receipt signature cannot be read',
      );
  });
});
