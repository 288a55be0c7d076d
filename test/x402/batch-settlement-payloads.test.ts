import { describe, expect, it } from 'bun:test';
import {
  BATCH_SETTLEMENT_REASONS,
  BatchSettlementPayloadError,
  X402Error,
  parseBatchClientPayload,
  parseBatchRequirements,
  parseBatchRequirementsExtra,
  parseBatchSettlePayload,
  parseChannelState,
  parsePaymentResponseExtra,
  type BatchSettlementReason,
} from 'skill-market/x402';
import { thrown } from './factories';

const address = (digit: string) => `0x${digit.repeat(40)}`;
const bytes32 = (digit: string) => `0x${digit.repeat(64)}` as const;
const signature = `0x${'ab'.repeat(65)}`;
const config = {
  payer: address('1'),
  payerAuthorizer: address('2'),
  receiver: address('3'),
  receiverAuthorizer: address('4'),
  token: address('5'),
  withdrawDelay: 900,
  salt: bytes32('0'),
};
const voucher = { channelId: bytes32('c'), maxClaimableAmount: '1000', signature };
const deposit = () => ({
  type: 'deposit',
  channelConfig: { ...config },
  voucher: { ...voucher },
  deposit: {
    amount: '100000',
    authorization: { erc3009Authorization: { validAfter: '0', validBefore: '1770000000', salt: bytes32('9'), signature } },
  },
});
const claim = () => ({
  type: 'claim',
  claims: [{ voucher: { channel: { ...config }, maxClaimableAmount: '5000' }, signature, totalClaimed: '5000' }],
});
const refundSettle = () => ({
  type: 'refund',
  channelConfig: { ...config },
  voucher: { ...voucher },
  amount: '1500',
  refundNonce: '0',
  claims: claim().claims,
});

function expectReason(fn: () => unknown, reason: BatchSettlementReason) {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(BatchSettlementPayloadError);
  expect(error).toBeInstanceOf(X402Error);
  expect((error as BatchSettlementPayloadError).reason).toBe(reason);
}

describe('batch-settlement payloads', () => {
  it('parses the client payloads: deposit (ERC-3009 salt as hex or decimal), voucher, refund with and without an amount', () => {
    expect(parseBatchClientPayload(deposit()).type).toBe('deposit');
    const decimalSalt = deposit() as Record<string, any>;
    decimalSalt.deposit.authorization.erc3009Authorization.salt = '12345';
    expect(parseBatchClientPayload(decimalSalt).type).toBe('deposit');
    expect(parseBatchClientPayload({ type: 'voucher', channelConfig: config, voucher }).type).toBe('voucher');
    expect(parseBatchClientPayload({ type: 'refund', channelConfig: config, voucher })).toMatchObject({ type: 'refund' });
    expect(parseBatchClientPayload({ type: 'refund', channelConfig: config, voucher, amount: '7' })).toMatchObject({ amount: '7' });
  });

  it('parses what a server sends /settle: deposit, claim, settle, and the refund it completed', () => {
    expect(parseBatchSettlePayload(deposit()).type).toBe('deposit');
    expect(parseBatchSettlePayload({ ...claim(), claimAuthorizerSignature: signature }).type).toBe('claim');
    expect(parseBatchSettlePayload({ type: 'settle', receiver: address('3'), token: address('5') }).type).toBe('settle');
    expect(parseBatchSettlePayload(refundSettle())).toMatchObject({ type: 'refund', refundNonce: '0' });
  });

  it('names the spec reason of each malformed payload', () => {
    expectReason(() => parseBatchClientPayload({ type: 'claim', claims: [] }), BATCH_SETTLEMENT_REASONS.payloadType);
    expectReason(() => parseBatchClientPayload(null), BATCH_SETTLEMENT_REASONS.payloadType);
    expectReason(
      () => parseBatchClientPayload({ type: 'voucher', channelConfig: config, voucher: { ...voucher, maxClaimableAmount: '1e3' } }),
      BATCH_SETTLEMENT_REASONS.voucherPayload,
    );
    expectReason(
      () =>
        parseBatchClientPayload({
          type: 'voucher',
          channelConfig: config,
          voucher: { ...voucher, maxClaimableAmount: (2n ** 128n).toString() },
        }),
      BATCH_SETTLEMENT_REASONS.voucherPayload,
    );
    expectReason(
      () => parseBatchClientPayload({ type: 'voucher', channelConfig: { ...config, payer: '0x12' }, voucher }),
      BATCH_SETTLEMENT_REASONS.voucherPayload,
    );
    expectReason(
      () => parseBatchClientPayload({ type: 'voucher', channelConfig: { ...config, withdrawDelay: 60 }, voucher }),
      BATCH_SETTLEMENT_REASONS.withdrawDelayOutOfRange,
    );
    const both = deposit() as Record<string, any>;
    both.deposit.authorization.permit2Authorization = { ...both.deposit.authorization.erc3009Authorization };
    expectReason(() => parseBatchClientPayload(both), BATCH_SETTLEMENT_REASONS.depositPayload);
    const none = deposit() as Record<string, any>;
    none.deposit.authorization = {};
    expectReason(() => parseBatchClientPayload(none), BATCH_SETTLEMENT_REASONS.depositPayload);
    expectReason(
      () => parseBatchClientPayload({ type: 'refund', channelConfig: config, voucher, amount: '0' }),
      BATCH_SETTLEMENT_REASONS.refundAmountInvalid,
    );
    expectReason(() => parseBatchSettlePayload({ type: 'claim', claims: [] }), BATCH_SETTLEMENT_REASONS.claimPayload);
    const over = claim() as Record<string, any>;
    over.claims[0].totalClaimed = '5001';
    expectReason(() => parseBatchSettlePayload(over), BATCH_SETTLEMENT_REASONS.claimPayload);
    expectReason(() => parseBatchSettlePayload({ type: 'settle', receiver: address('3') }), BATCH_SETTLEMENT_REASONS.settlePayload);
    const { refundNonce: _, ...notCompleted } = refundSettle();
    expectReason(() => parseBatchSettlePayload(notCompleted), BATCH_SETTLEMENT_REASONS.refundPayload);
    expectReason(() => parseBatchSettlePayload({ type: 'voucher', channelConfig: config, voucher }), BATCH_SETTLEMENT_REASONS.payloadType);
  });

  it('reads requirements, their extra, the channel snapshot and the PAYMENT-RESPONSE extra', () => {
    const operation = {
      scheme: 'batch-settlement',
      network: 'eip155:8453',
      amount: '0',
      asset: address('5'),
      payTo: address('3'),
      maxTimeoutSeconds: 0,
      extra: {},
    };
    expect(parseBatchRequirements(operation).maxTimeoutSeconds).toBe(0);
    expectReason(() => parseBatchRequirements({ ...operation, scheme: 'exact' }), BATCH_SETTLEMENT_REASONS.scheme);
    const extra = { receiverAuthorizer: address('4'), withdrawDelay: 900, name: 'USDC', version: '2' };
    expect(parseBatchRequirementsExtra(extra).withdrawDelay).toBe(900);
    expectReason(() => parseBatchRequirementsExtra({ ...extra, name: undefined }), BATCH_SETTLEMENT_REASONS.missingEip712Domain);
    expectReason(
      () => parseBatchRequirementsExtra({ ...extra, receiverAuthorizer: address('0') }),
      BATCH_SETTLEMENT_REASONS.receiverAuthorizerMismatch,
    );
    const state = { channelId: bytes32('c'), balance: '100000', totalClaimed: '3200', withdrawRequestedAt: 0, refundNonce: '1' };
    expect(parseChannelState(state)).toEqual(state);
    expectReason(() => parseChannelState({ ...state, balance: 5 }), BATCH_SETTLEMENT_REASONS.channelStateReadFailed);
    const receipt = { chargedAmount: '700', channelState: { ...state, chargedCumulativeAmount: '3900' } };
    expect(parsePaymentResponseExtra(receipt)).toEqual(receipt);
    expect(parsePaymentResponseExtra(undefined)).toEqual({});
  });
});
