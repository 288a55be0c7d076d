/**
 * The reading tools: search, one skill's details (its input schema included), reviews as the
 * registry publishes them, and groups. They work without a wallet.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { SkillMarket } from 'skill-market/client';
import { priceLabel, type ReviewView } from 'skill-market/registry';
import { readReviews } from '../reviews';
import { answer, summary } from './result';
import { groupsOutput, reviewsOutput, searchOutput, skillOutput } from './schemas';

export function registerDiscoveryTools(server: McpServer, market: SkillMarket): void {
  server.registerTool(
    'search_skills',
    {
      title: 'Search skills',
      description:
        'Find paid skills in the marketplace by words, group and price, and in the other catalogues this server reads (x402 Bazaar discovery APIs; those results say where they came from and are called by their URL). Returns each skill\'s slug (use it with get_skill and call_skill), name, price per call in USDC ("up to $0.01" for a usage-based skill: charged what each call used, at most that) and a short description. Use an empty query to browse.',
      inputSchema: {
        query: z
          .string()
          .max(200)
          .optional()
          .describe('Words to look for in names and descriptions, e.g. "weather forecast"; omit to browse.'),
        group: z.string().max(100).optional().describe('Only skills in this group (slug or name; see list_groups).'),
        maxPrice: z.string().max(20).optional().describe('Only skills costing at most this per call, in USD, e.g. "$0.01".'),
        sort: z.enum(['relevance', 'popular', 'newest', 'price', 'rating']).optional().describe('Order of results; default relevance.'),
        limit: z.number().int().min(1).max(50).optional().describe('How many skills to return, 1-50; default 10.'),
        cursor: z.string().max(512).optional().describe('nextCursor of a previous search, for the next page.'),
      },
      outputSchema: searchOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args) =>
      answer(async () => {
        const page = await market.search(args.query ?? '', {
          ...(args.group ? { group: args.group } : {}),
          ...(args.maxPrice ? { maxPrice: args.maxPrice } : {}),
          ...(args.sort ? { sort: args.sort } : {}),
          ...(args.cursor ? { cursor: args.cursor } : {}),
          limit: args.limit ?? 10,
        });
        const skills = page.skills.map(summary);
        const discovered = page.discovered.map((s) => ({ ...summary(s), source: s.source }));
        const line = (s: ReturnType<typeof summary>) =>
          `- ${s.slug}: ${s.name}, ${priceLabel(s)}/call${s.description ? ` — ${s.description.slice(0, 120)}` : ''}`;
        const text = [
          skills.length === 0
            ? 'No skill matches in the registry.'
            : `${skills.length} skill(s) in the registry:\n${skills.map(line).join('\n')}${page.nextCursor ? `\nMore: pass cursor "${page.nextCursor}".` : ''}`,
          ...(discovered.length > 0
            ? [
                `${discovered.length} in other catalogues (call them by URL):\n${discovered.map((s) => `${line(s)} (from ${s.source})`).join('\n')}`,
              ]
            : []),
          ...page.catalogueProblems.map((p) => `Catalogue ${p.source} could not be read: ${p.message}`),
        ].join('\n');
        return { text, structured: { skills, nextCursor: page.nextCursor ?? null, discovered } };
      }),
  );

  server.registerTool(
    'get_skill',
    {
      title: 'Skill details',
      description:
        'Everything about one skill before calling it: price per call (the most a call costs when usageBased), status, counters, and its inputSchema (JSON Schema the input of call_skill must satisfy) and outputSchema. Read this before call_skill to build valid input.',
      inputSchema: {
        slug: z
          .string()
          .min(1)
          .max(2048)
          .describe('The skill slug, as search_skills lists it (or the URL of a resource from another catalogue).'),
      },
      outputSchema: skillOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ slug }) =>
      answer(async () => {
        const skill = await market.info(slug);
        const details = {
          ...summary(skill),
          endpoint: skill.endpoint,
          paymentAddress: skill.paymentAddress,
          inputSchema: skill.inputSchema,
          outputSchema: skill.outputSchema,
          viewCount: skill.viewCount ?? null,
          rating: skill.rating ?? null,
          reviewCount: skill.reviewCount ?? 0,
          status: skill.status ?? 'unknown',
          latencyMs: skill.latencyMs ?? null,
        };
        const text = [
          `${skill.slug}: ${skill.name} — ${priceLabel(skill)} per call${skill.usageBased ? ', charged by use' : ''} on ${skill.network}${skill.isActive ? '' : ' (INACTIVE: cannot be called)'}`,
          skill.description ?? '',
          `Calls: ${skill.callCount ?? 0}, favorites: ${skill.favoriteCount ?? 0}. ${skill.reviewCount ? `Rated ${skill.rating}/5 by ${skill.reviewCount} verified buyer(s).` : 'No reviews yet.'} Server: ${skill.status ?? 'unknown'}${skill.latencyMs != null ? ` (${skill.latencyMs} ms)` : ''}.`,
          `Input schema: ${skill.inputSchema ? JSON.stringify(skill.inputSchema) : 'none (any JSON object)'}`,
          `Output schema: ${skill.outputSchema ? JSON.stringify(skill.outputSchema) : 'none given'}`,
        ]
          .filter(Boolean)
          .join('\n');
        return { text, structured: details };
      }),
  );

  server.registerTool(
    'skill_reviews',
    {
      title: 'Skill reviews',
      description: 'Reviews of a skill, as the registry publishes them. Says plainly when the registry has none.',
      inputSchema: { slug: z.string().min(1).max(200).describe('The skill slug.') },
      outputSchema: reviewsOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ slug }) =>
      answer(async () => {
        await market.info(slug);
        const reviews = await readReviews(market, slug);
        if (!reviews.available)
          return {
            text: `The registry offers no reviews (${reviews.reason}).`,
            structured: { slug, available: false, reviews: [], note: reviews.reason },
          };
        return {
          text:
            reviews.items.length === 0
              ? `No reviews of ${slug} yet.`
              : `${reviews.items.length} review(s) of ${slug}:\n${reviews.items.map(reviewLine).join('\n')}`,
          structured: { slug, available: true, reviews: reviews.items },
        };
      }),
  );

  server.registerTool(
    'list_groups',
    {
      title: 'Skill groups',
      description: 'The groups skills are filed under (use a group slug with search_skills).',
      inputSchema: { creator: z.string().max(100).optional().describe("Only one creator's groups (wallet address).") },
      outputSchema: groupsOutput,
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ creator }) =>
      answer(async () => {
        const groups = (await market.groups(creator ? { creator } : {})).map((g) => ({
          slug: g.slug,
          name: g.name,
          description: g.description,
        }));
        return {
          text:
            groups.length === 0
              ? 'No groups.'
              : groups.map((g) => `- ${g.slug}: ${g.name}${g.description ? ` — ${g.description}` : ''}`).join('\n'),
          structured: { groups },
        };
      }),
  );
}

/** `- 4/5 by 0x1234…abcd: "comment"` for a review as the registry lists it. */
function reviewLine(review: ReviewView): string {
  const who = ` by ${review.consumerAddress.slice(0, 6)}…${review.consumerAddress.slice(-4)}`;
  const comment = review.comment ? `: ${JSON.stringify(review.comment)}` : '';
  return `- ${review.score}/5${who}${comment}`;
}
