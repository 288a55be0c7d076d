/**
 * The output schemas the tools declare: a client checks every `structuredContent` against them
 * (the official MCP client does). A refused or failed call answers only `error` (with `isError`),
 * so each schema's fields are optional beside it; objects stay open to fields added later.
 */
import { z } from 'zod';

const ErrorInfo = z
  .looseObject({
    code: z.string().describe('Machine code, e.g. budget_exceeded, invalid_input, skill_not_found.'),
    message: z.string().describe('What happened to the money and what to do.'),
  })
  .describe('Set instead of the answer when the tool refused or failed (isError).');

/** An answer of `shape`, or a refusal carrying `error` only. */
const answer = <S extends z.ZodRawShape>(shape: S) => z.looseObject(shape).partial().extend({ error: ErrorInfo.optional() });

const SkillSummary = z.looseObject({
  slug: z.string().describe('Use with get_skill and call_skill.'),
  name: z.string(),
  description: z.string().nullable().optional(),
  price: z.string().describe('Price per call in USD, e.g. "$0.001".'),
  priceAtomic: z.string().describe('The same in micro-USDC.'),
  usageBased: z.boolean().describe('True when price is the most a call costs: the skill charges what each call used.'),
  network: z.string().describe('CAIP-2 payment network.'),
  groups: z.array(z.string()),
  isActive: z.boolean(),
  verified: z.boolean(),
  creatorAddress: z.string().nullable(),
  callCount: z.number(),
  favoriteCount: z.number(),
});

const JsonSchema = z.record(z.string(), z.unknown()).nullable().optional();

export const searchOutput = answer({
  skills: z.array(SkillSummary),
  nextCursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last.'),
  discovered: z
    .array(SkillSummary.extend({ source: z.string().describe('The catalogue that lists it.') }))
    .describe('Matches in other catalogues (first page only); slug is the resource URL.'),
});

export const skillOutput = answer({
  ...SkillSummary.shape,
  endpoint: z.string(),
  paymentAddress: z.string(),
  inputSchema: JsonSchema.describe('JSON Schema the input of call_skill must satisfy.'),
  outputSchema: JsonSchema,
  viewCount: z.number().nullable(),
  rating: z.number().nullable().describe('Average score of verified buyers, 1-5.'),
  reviewCount: z.number(),
  status: z.string().describe('Health of the skill server: up, down or unknown.'),
  latencyMs: z.number().nullable(),
});

export const reviewsOutput = answer({
  slug: z.string(),
  available: z.boolean(),
  reviews: z.array(z.looseObject({ score: z.number(), consumerAddress: z.string(), comment: z.string().nullable() })),
  note: z.string().optional(),
});

export const groupsOutput = answer({
  groups: z.array(z.looseObject({ slug: z.string(), name: z.string(), description: z.string().nullable().optional() })),
});

const Receipt = z
  .looseObject({
    transaction: z.string().nullable(),
    amount: z.string().describe('What this call was charged, atomic units of the token (micro-USDC).'),
    deposit: z
      .string()
      .optional()
      .describe(
        'What this call deposited into its payment channel first, atomic units: refundable escrow later calls are charged from, not part of amount.',
      ),
    network: z.string(),
    payTo: z.string(),
    payer: z.string(),
    scheme: z.string().describe('`exact` (a transfer) or `batch-settlement` (a payment channel).'),
    channelId: z.string().optional().describe('The payment channel, for batch-settlement.'),
  })
  .nullable()
  .describe('The payment; null when the skill asked for none.');

export const callOutput = answer({
  slug: z.string(),
  result: z.unknown().describe("The skill's result."),
  receipt: Receipt,
});

export const walletOutput = answer({
  address: z.string().nullable(),
  mode: z.enum(['paying', 'discovery-only']),
  balance: z.looseObject({ amount: z.string(), formatted: z.string(), asset: z.string(), network: z.string() }).nullable(),
  balanceError: z.string().nullable(),
  budget: z.looseObject({
    period: z.string(),
    periodStart: z.string(),
    resetsAt: z.string(),
    limit: z.string(),
    spent: z.string(),
    reserved: z.string(),
    remaining: z.string(),
  }),
  limits: z.looseObject({
    maxPricePerCall: z.string(),
    confirmAbove: z.string().nullable(),
    allowList: z.array(z.string()).nullable(),
  }),
  channels: z
    .looseObject({
      count: z.number(),
      deposited: z.string().describe('Held in payment channels, atomic units.'),
      charged: z.string(),
      yours: z.string().describe('deposited − charged: refundable with get_money_back, atomic units.'),
    })
    .describe("Money in the wallet's payment channels: escrow, not spending."),
});

export const recentOutput = answer({
  calls: z.array(
    z.looseObject({
      at: z.string(),
      slug: z.string(),
      amount: z.string(),
      charged: z.enum(['yes', 'unknown']),
      transaction: z.string().nullable(),
    }),
  ),
});

const ChannelInfo = z.looseObject({
  channelId: z.string(),
  server: z.string().nullable().describe('The skill endpoint that opened it.'),
  receiver: z.string().describe("The server's payout address."),
  deposit: z.string().describe('Deposited and not withdrawn or refunded, atomic units.'),
  charged: z.string().describe('What the server charged in all, atomic units.'),
  yours: z.string().describe('deposit − charged: what the payer can get back, atomic units.'),
  withdrawing: z.string().nullable().describe('A timed withdrawal under way, atomic units.'),
});

export const channelsOutput = answer({ channels: z.array(ChannelInfo) });

export const moneyBackOutput = answer({
  results: z.array(
    z.looseObject({
      channelId: z.string(),
      outcome: z.enum(['refunded', 'withdrawal-started', 'refused']),
      amount: z.string().nullable().describe('Refunded, or being withdrawn, atomic units.'),
      transaction: z.string().nullable(),
      message: z.string().describe('What happened, in plain words.'),
    }),
  ),
});
