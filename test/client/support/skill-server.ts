/**
 * A small paywalled skill server for client tests, built from sdk/x402 and our facilitator over
 * HTTP (no creator SDK): the documented 402 body plus (optionally) the PAYMENT-REQUIRED header,
 * proofs from X-Payment or PAYMENT-SIGNATURE, the stored response when a proof is re-sent, and
 * knobs to misbehave: other terms than the listing, a dropped connection after settling.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  buildPaymentTerms,
  paymentMatchesRequirements,
  paymentRequiredResponse,
  readPaymentHeader,
  requirementsToV1,
  settleResponseHeaders,
  type AssetInfo,
  type PaymentRequirements,
  type PaymentTerms,
  type SettleResponse,
} from 'skill-market/x402';

export interface TestSkill {
  price: bigint;
  payTo: string;
  network: string;
  asset: AssetInfo;
  handler: (input: unknown) => unknown;
  /** 'both' (default): documented body + PAYMENT-REQUIRED header; 'body': the body only. */
  terms?: 'both' | 'body';
  /** Change the terms this server asks for (and accepts) without changing the listing. */
  tamper?: (requirements: PaymentRequirements) => Omit<Partial<PaymentRequirements>, 'asset'> & { price?: bigint; asset?: AssetInfo };
  /** Drop the connection (no answer) after settling the first N paid requests. */
  dropAfterSettle?: number;
  /** No replay memory (as the reference x402 middleware): a re-sent proof is verified (and refused) anew. */
  forgetful?: boolean;
  /** Refuse proofs as a legacy x402 v1 server: body `{x402Version: 1, error, accepts: [v1 requirements]}`, no PAYMENT-REQUIRED header. */
  v1Refusals?: boolean;
  /**
   * Answer the first `answers` posts of each proof 409 `payment_pending` (Retry-After 0); with
   * `settleFirst` the call runs and settles on the first post all the same.
   */
  pending?: { answers: number; settleFirst: boolean };
}

export interface ServedRequest {
  skill: string;
  proof: string | null;
  xPayment: string | null;
  paymentSignature: string | null;
  status: number | 'dropped';
}

export interface TestSkillServer {
  url: string;
  skills: Map<string, TestSkill>;
  requests: ServedRequest[];
  handlerRuns: number;
  settlements: SettleResponse[];
  close(): Promise<void>;
}

interface Stored {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Starts the server on 127.0.0.1; `facilitatorUrl` may be omitted when no call is expected to pay. */
function pendingAnswer(): Stored {
  const body = {
    success: false,
    code: 'payment_pending',
    error: 'Payment pending; retry with the same proof',
    retryAfter: 0,
    timestamp: new Date().toISOString(),
  };
  return { status: 409, headers: { 'content-type': 'application/json', 'retry-after': '0' }, body: JSON.stringify(body) };
}

export async function startSkillServer(facilitatorUrl?: string): Promise<TestSkillServer> {
  const stored = new Map<string, Promise<Stored>>();
  const posts = new Map<string, number>();
  const state: TestSkillServer = { url: '', skills: new Map(), requests: [], handlerRuns: 0, settlements: [], close: async () => {} };

  const facilitator = async (path: '/verify' | '/settle', requirements: PaymentRequirements, paymentPayload: unknown) => {
    if (!facilitatorUrl) throw new Error('this test server has no facilitator');
    const res = await fetch(`${facilitatorUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: requirements }),
    });
    return (await res.json()) as Record<string, unknown>;
  };

  const termsOf = (name: string, skill: TestSkill): PaymentTerms => {
    const base = buildPaymentTerms({
      amount: skill.price,
      payTo: skill.payTo,
      network: skill.network,
      asset: skill.asset,
      resourceUrl: `${state.url}/${name}`,
    });
    if (!skill.tamper) return base;
    const t = skill.tamper(base.requirements);
    return buildPaymentTerms({
      amount: t.price ?? (t.amount ? BigInt(t.amount) : skill.price),
      payTo: t.payTo ?? skill.payTo,
      network: t.network ?? skill.network,
      asset: t.asset ?? skill.asset,
      maxTimeoutSeconds: t.maxTimeoutSeconds ?? 60,
      resourceUrl: `${state.url}/${name}`,
    });
  };

  async function handle(
    name: string,
    skill: TestSkill,
    req: IncomingMessage,
    text: string,
    _record: ServedRequest,
  ): Promise<Stored | 'drop'> {
    const terms = termsOf(name, skill);
    const unpaid = (reason?: string): Stored => {
      const r = paymentRequiredResponse(terms, reason);
      const headers = { ...r.headers };
      if (skill.terms === 'body') delete headers['PAYMENT-REQUIRED'];
      return { status: 402, headers, body: JSON.stringify(r.body) };
    };
    let refuse: (reason: string) => Stored = unpaid;
    const read = readPaymentHeader({ get: (h) => (req.headers[h.toLowerCase()] as string | undefined) ?? null });
    if (read.type === 'none') return unpaid();
    if (read.type === 'error') return unpaid(read.error.code);
    if (skill.v1Refusals) {
      const accepts = [requirementsToV1(read.payment, terms.requirements, { url: `${state.url}/${name}`, description: '' })];
      refuse = (reason) => ({
        status: 402,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ x402Version: 1, error: reason, accepts }),
      });
    }
    if (!paymentMatchesRequirements(read.payment, terms.requirements)) return refuse('accepted_mismatch');
    const key = read.payment.authorization.nonce + read.payment.signature;
    const post = (posts.get(key) ?? 0) + 1;
    posts.set(key, post);
    const pendingNow = skill.pending !== undefined && post <= skill.pending.answers;
    if (pendingNow && !skill.pending!.settleFirst) return pendingAnswer();
    const work =
      (!skill.forgetful && stored.get(key)) ||
      (async (): Promise<Stored> => {
        const verdict = await facilitator('/verify', terms.requirements, read.payment.original);
        if (verdict.isValid !== true) return refuse(String(verdict.invalidReason));
        state.handlerRuns++;
        let result: unknown;
        try {
          result = await skill.handler(JSON.parse(text || '{}'));
        } catch (error) {
          return {
            status: 500,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ success: false, error: (error as Error).message, timestamp: new Date().toISOString() }),
          };
        }
        const settled = (await facilitator('/settle', terms.requirements, read.payment.original)) as unknown as SettleResponse;
        state.settlements.push(settled);
        if (!settled.success) return refuse(String(settled.errorReason));
        return {
          status: 200,
          headers: { 'content-type': 'application/json', ...settleResponseHeaders(settled) },
          body: JSON.stringify({ success: true, result, timestamp: new Date().toISOString() }),
        };
      })();
    stored.set(key, work);
    if (pendingNow) {
      await work;
      return pendingAnswer();
    }
    const answer = await work;
    if (answer.status === 200 && (skill.dropAfterSettle ?? 0) > 0) {
      skill.dropAfterSettle!--;
      return 'drop';
    }
    return answer;
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const name = (req.url ?? '/').slice(1).split('?')[0]!;
      const skill = state.skills.get(name);
      const record: ServedRequest = {
        skill: name,
        proof: (req.headers['payment-signature'] ?? req.headers['x-payment'] ?? null) as string | null,
        xPayment: (req.headers['x-payment'] as string | undefined) ?? null,
        paymentSignature: (req.headers['payment-signature'] as string | undefined) ?? null,
        status: 404,
      };
      state.requests.push(record);
      if (req.method !== 'POST' || !skill) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, error: 'Not found' }));
        return;
      }
      handle(name, skill, req, Buffer.concat(chunks).toString('utf8'), record).then(
        (answer) => {
          if (answer === 'drop') {
            record.status = 'dropped';
            req.socket.destroy();
            return;
          }
          record.status = answer.status;
          res.writeHead(answer.status, answer.headers).end(answer.body);
        },
        (error: unknown) => {
          record.status = 500;
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, error: String(error) }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
