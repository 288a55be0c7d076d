/**
 * Payment channels in this browser: whether the visitor chose to pay through one, the channel
 * records (a localStorage-backed ChannelStore the SDK's channel scheme reads and writes), and
 * the session key that signs vouchers. The key is the channels' payerAuthorizer: it can sign for
 * no more than a channel holds (the visitor's deposits, sized by the SDK's deposit policy), and only to that
 * channel's receiver; it never touches the wallet's other funds. A lost record is rebuilt from the
 * server's corrective 402 (sdk/payment/schemes/channel), so storage is a convenience.
 */
import { signal } from '@preact/signals';
import type { ChannelRecord, ChannelStore } from 'skill-market/client';
import { getAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const CHOICE = 'market.channel.opt-in';
const RECORDS = 'market.channel.records';
const SESSION_KEY = 'market.channel.session-key';

/** Whether this browser pays through channels where a skill offers them (off until the visitor opts in). */
export const channelChoice = signal<boolean>(readChoice());

function readChoice(): boolean {
  try {
    return localStorage.getItem(CHOICE) === 'on';
  } catch {
    return false; // storage blocked: exact, as by default
  }
}

export function chooseChannel(on: boolean): void {
  channelChoice.value = on;
  localStorage.setItem(CHOICE, on ? 'on' : 'off');
}

/** Every channel record this browser keeps, kept current for the page. */
export const channelRecords = signal<ChannelRecord[]>(Object.values(readRecords()));

function readRecords(): Record<string, ChannelRecord> {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(RECORDS) ?? '{}');
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, ChannelRecord>) : {};
  } catch {
    return {}; // unreadable: recovered from the server's corrective 402
  }
}

/** The channel records in localStorage, one JSON object keyed by channel id. */
export const browserChannelStore: ChannelStore = {
  get: async (id) => readRecords()[id.toLowerCase()],
  list: async () => Object.values(readRecords()),
  set: async (record) => {
    const records = readRecords();
    records[record.channelId.toLowerCase()] = record;
    localStorage.setItem(RECORDS, JSON.stringify(records));
    channelRecords.value = Object.values(records);
  },
};

/** The session key that signs vouchers, made once per browser and kept. */
export function sessionKey(): ReturnType<typeof privateKeyToAccount> {
  let key = localStorage.getItem(SESSION_KEY) as Hex | null;
  if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) {
    key = generatePrivateKey();
    localStorage.setItem(SESSION_KEY, key);
  }
  return privateKeyToAccount(key);
}

/** The session key when one was made in this browser, without making one. */
export function sessionAccount(): ReturnType<typeof privateKeyToAccount> | undefined {
  const key = localStorage.getItem(SESSION_KEY);
  return key && /^0x[0-9a-fA-F]{64}$/.test(key) ? privateKeyToAccount(key as Hex) : undefined;
}

const sessionAddress = () => sessionAccount()?.address;

/** What is left in a channel: deposited and not yet charged, atomic units. */
export const channelLeft = (record: ChannelRecord): bigint => BigInt(record.balance) - BigInt(record.charged);

/** The usable channel this browser's session key holds from `payer` to `receiver`, if any. */
export function openChannel(records: ChannelRecord[], receiver: string, payer?: string): ChannelRecord | undefined {
  const authorizer = sessionAddress();
  if (!authorizer) return undefined;
  return records.find(
    (r) =>
      !r.stopped &&
      getAddress(r.config.receiver) === getAddress(receiver) &&
      getAddress(r.config.payerAuthorizer) === authorizer &&
      (!payer || getAddress(r.config.payer) === getAddress(payer)),
  );
}
