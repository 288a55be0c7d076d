/**
 * The receipts' digests computed directly (x402/receipt-digest.ts) against viem's generic EIP-712
 * encoder, on many random receipts: the same signature as viem signing the receipt's typed data,
 * a refusal for every receipt viem refuses, the signer recovered; and the offer-receipt
 * extension's receipt signed as its typed data and verified by @x402/extensions' own verifier.
 */
import { describe, expect, it } from 'bun:test';
import { verifyReceiptSignatureEIP712 } from '@x402/extensions/offer-receipt';
import fc from 'fast-check';
import { getAddress, hashTypedData, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { receiptHash, receiptSignerOf, signOfferReceipt, signSkillReceipt, type SkillReceiptPayload } from 'skill-market/x402';

const account = privateKeyToAccount(generatePrivateKey());
/** The same key, signing typed data only: the path through viem's encoder. */
const typedOnly = { address: account.address, signTypedData: account.signTypedData };

const RECEIPT_TYPES = {
  Receipt: [
    { name: 'version', type: 'uint256' },
    { name: 'resourceUrl', type: 'string' },
    { name: 'skill', type: 'string' },
    { name: 'network', type: 'string' },
    { name: 'scheme', type: 'string' },
    { name: 'payer', type: 'address' },
    { name: 'amount', type: 'uint256' },
    { name: 'transaction', type: 'string' },
    { name: 'cumulativeAmount', type: 'uint256' },
    { name: 'issuedAt', type: 'uint256' },
    { name: 'bodyDigest', type: 'bytes32' },
  ],
} as const;

/** A receipt's typed data as the receipt's spec writes it, for viem to hash or sign. */
const typedData = (p: SkillReceiptPayload) => ({
  domain: { name: 'skill-market receipt', version: '1', chainId: Number(p.network.slice('eip155:'.length)) },
  types: RECEIPT_TYPES,
  primaryType: 'Receipt' as const,
  message: { ...p, version: 1n, amount: BigInt(p.amount), cumulativeAmount: BigInt(p.cumulativeAmount), issuedAt: BigInt(p.issuedAt) },
});

const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString('hex')}`);
const text = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constant(''));
const atomic = fc.oneof(fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }), fc.bigInt({ min: 0n, max: 10n ** 12n })).map(String);
/** An address as a server writes it (checksummed) or a client might (lower case). */
const address = hex(20).chain((a) => fc.constantFrom(a, getAddress(a)));

const payloads = fc.record({
  version: fc.constant(1 as const),
  resourceUrl: fc.oneof(text, fc.webUrl()),
  skill: text,
  network: fc.integer({ min: 1, max: 2 ** 40 }).map((id) => `eip155:${id}`),
  scheme: fc.constantFrom('exact', 'upto', 'batch-settlement'),
  payer: address,
  amount: atomic,
  transaction: fc.oneof(hex(32), text),
  cumulativeAmount: atomic,
  issuedAt: fc.nat(),
  bodyDigest: hex(32).chain((d) => fc.constantFrom(d, d.toUpperCase().replace('0X', '0x'))),
}) as fc.Arbitrary<SkillReceiptPayload>;

/** The signature, or that signing threw. */
const outcome = (signature: Promise<Hex>) => signature.catch(() => 'refused');

describe('receipt digests', () => {
  it('signs every receipt with the signature of its EIP-712 typed data, and recovers the key from it', async () => {
    await fc.assert(
      fc.asyncProperty(payloads, async (p) => {
        const signed = await signSkillReceipt(account, p);
        expect(signed.signature).toBe(await account.signTypedData(typedData(p)));
        expect(receiptHash(p)).toBe(hashTypedData(typedData(p)));
        expect(await receiptSignerOf(signed)).toBe(account.address);
      }),
      { numRuns: 150 },
    );
  });

  it('refuses what viem refuses: a payer that is no address or has a wrong checksum, an amount above uint256', async () => {
    const broken = payloads.chain((p) =>
      fc.constantFrom<SkillReceiptPayload>(
        { ...p, payer: `0x${p.payer.slice(2, 41)}` as SkillReceiptPayload['payer'] },
        { ...p, payer: `0x${p.payer.slice(2).toUpperCase()}` as SkillReceiptPayload['payer'] },
        {
          ...p,
          payer: (getAddress(p.payer).slice(0, 41) + (getAddress(p.payer).endsWith('a') ? 'A' : 'a')) as SkillReceiptPayload['payer'],
        },
        { ...p, amount: (1n << 256n).toString() },
        { ...p, cumulativeAmount: `${'9'.repeat(78)}` },
        { ...p, bodyDigest: p.bodyDigest.slice(0, 64) as Hex },
      ),
    );
    await fc.assert(
      fc.asyncProperty(broken, async (p) => {
        const ours = await outcome(signSkillReceipt(account, p).then((signed) => signed.signature));
        expect(ours).toBe(await outcome(account.signTypedData(typedData(p))));
      }),
      { numRuns: 150 },
    );
  });

  it('signs the extension’s receipt as its typed data, which @x402/extensions verifies', async () => {
    await fc.assert(
      fc.asyncProperty(payloads, async (p) => {
        const offered = await signOfferReceipt(account, p);
        expect(offered.signature).toBe((await signOfferReceipt(typedOnly, p)).signature);
        const { signer, payload } = await verifyReceiptSignatureEIP712(offered);
        expect(signer).toBe(account.address);
        expect(payload).toEqual(offered.payload);
      }),
      { numRuns: 40 },
    );
  });
});
