/**
 * What a paid answer's receipts cost in CPU, in process: the pieces the skill server runs on every
 * paid answer (creator/receipts.ts `signAnswer`: the body's SHA-256, our EIP-712 receipt's digest
 * and signature, the header, the offer-receipt extension's receipt in PAYMENT-RESPONSE) and the
 * buyer's check (payment/receipt-check.ts: the header read, the signer, the body's digest and the
 * payment's facts), next to what viem's generic typed-data path costs for the same digest and
 * recovery. CPU time (process.cpuUsage) per operation over many runs, best of five rounds: steady
 * on a loaded machine, unlike wall-clock time. Prints only; writes nothing.
 *   npx bun bench/receipt-costs.ts [runs=400]
 * Instruction counts, steadier still: one operation (`sign`: an exact answer's signing, `check`:
 * the buyer's check, `none`: only the setup) run `runs` times under callgrind; the difference of
 * two operations' counts over runs is the count per run.
 *   valgrind --tool=callgrind --smc-check=all-non-file node_modules/bun/bin/bun.exe bench/receipt-costs.ts sign 40
 */
import { hashTypedData, recoverTypedDataAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  bodyDigest,
  decodeBase64Json,
  encodeBase64Json,
  encodeReceiptHeader,
  RECEIPT_HEADER,
  readReceiptHeader,
  receiptHash,
  receiptProblem,
  receiptSignerOf,
  signOfferReceipt,
  signSkillReceipt,
  type SkillReceiptPayload,
} from 'skill-market/x402';
import { fmt, printTable } from './lib/results';

const OPERATION = ['sign', 'check', 'none'].includes(process.argv[2] ?? '') ? process.argv[2] : undefined;
const RUNS = Number(process.argv[OPERATION ? 3 : 2] ?? 400);
const ROUNDS = 5;

/** CPU µs per run of `op`, the best of ROUNDS rounds of RUNS runs (after one warm-up round). */
async function cpuMicros(op: () => unknown): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round <= ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < RUNS; i++) await op();
    const used = process.cpuUsage(start);
    if (round > 0) best = Math.min(best, (used.user + used.system) / RUNS);
  }
  return best;
}

const account = privateKeyToAccount(generatePrivateKey());
const payer = privateKeyToAccount(generatePrivateKey()).address;
const network = 'eip155:8453';
const transaction = `0x${'ab'.repeat(32)}` as Hex;
const body = JSON.stringify({ success: true, result: { echo: 'paid per call in test USDC' }, timestamp: new Date(0).toISOString() });
const settleHeader = encodeBase64Json({ success: true, transaction, network, payer });

const payloadOf = (answer: string): SkillReceiptPayload => ({
  version: 1,
  resourceUrl: 'https://skills.example/word-count',
  skill: 'word-count',
  network,
  scheme: 'exact',
  payer,
  amount: '1000',
  transaction,
  cumulativeAmount: '0',
  issuedAt: Math.floor(Date.now() / 1000),
  bodyDigest: bodyDigest(answer),
});

/** What `signAnswer` does for an exact answer: our receipt in its header, the extension's in PAYMENT-RESPONSE. */
async function signAnswer(answer: string): Promise<Record<string, string>> {
  const receipt = await signSkillReceipt(account, payloadOf(answer));
  const read = decodeBase64Json(settleHeader, 'malformed_settle_response', 'PAYMENT-RESPONSE') as Record<string, unknown>;
  const extensions = { 'offer-receipt': { info: { receipt: await signOfferReceipt(account, receipt.payload) } } };
  return { [RECEIPT_HEADER]: encodeReceiptHeader(receipt), 'PAYMENT-RESPONSE': encodeBase64Json({ ...read, extensions }) };
}

/** What the buyer's `checkReceipt` does: read the header, check the signer and the facts. */
async function checkReceipt(headers: Headers, answer: string): Promise<string | undefined> {
  const read = readReceiptHeader(headers);
  if (read?.type !== 'receipt') return 'no receipt';
  return receiptProblem(read.receipt, { signer: account.address, body: answer, maxAmount: 1000n, amount: 1000n, payer, network });
}

const signed = await signSkillReceipt(account, payloadOf(body));
const headers = new Headers(await signAnswer(body));
const problem = await checkReceipt(headers, body);
if (problem) throw new Error(`the receipt does not check: ${problem}`);
const typed = {
  domain: { name: 'skill-market receipt', version: '1', chainId: 8453 },
  types: {
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
  },
  primaryType: 'Receipt',
  message: { ...signed.payload, version: 1n, amount: 1000n, cumulativeAmount: 0n, issuedAt: BigInt(signed.payload.issuedAt) },
} as const;
const digest = receiptHash(signed.payload);
if (digest !== hashTypedData(typed)) throw new Error('receiptHash is not the EIP-712 digest');

if (OPERATION) {
  for (let i = 0; i < RUNS; i++) {
    if (OPERATION === 'sign') await signAnswer(body);
    if (OPERATION === 'check') await checkReceipt(headers, body);
  }
  process.exit(0);
}

const rows: [string, number][] = [
  ['server: body SHA-256 (bodyDigest)', await cpuMicros(() => bodyDigest(body))],
  ['server: receipt digest through viem (hashTypedData, receiptHash)', await cpuMicros(() => hashTypedData(typed))],
  ['server: secp256k1 signature of a digest (account.sign)', await cpuMicros(() => account.sign({ hash: digest }))],
  ['server: our receipt (signSkillReceipt)', await cpuMicros(() => signSkillReceipt(account, signed.payload))],
  ['server: extension receipt (signOfferReceipt)', await cpuMicros(() => signOfferReceipt(account, signed.payload))],
  ['server: whole signing of an exact answer', await cpuMicros(() => signAnswer(body))],
  [
    'client: recovery through viem (recoverTypedDataAddress)',
    await cpuMicros(() => recoverTypedDataAddress({ ...typed, signature: signed.signature })),
  ],
  ['client: recovery from the direct digest (receiptSignerOf)', await cpuMicros(() => receiptSignerOf(signed))],
  ['client: whole check of an answer’s receipt', await cpuMicros(() => checkReceipt(headers, body))],
];
printTable(
  `Receipt costs: CPU µs per operation, best of ${ROUNDS} rounds of ${RUNS}`,
  ['operation', 'CPU µs'],
  rows.map(([name, micros]) => [name, fmt(micros, 1)]),
);
