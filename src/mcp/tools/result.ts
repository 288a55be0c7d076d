/**
 * How every tool answers: a concise text plus the same facts as `structuredContent` (and as JSON
 * in a second text block), checked against the tool's output schema (schemas.ts), or a tool error
 * (`isError`) with a readable message and a machine code, never a protocol error or a crash.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MarketError, type Skill } from 'skill-market/client';
import { ToolFailure } from '../payments';

/** What search results and details share about a skill. */
export function summary(skill: Skill) {
  return {
    slug: skill.slug,
    name: skill.name,
    description: skill.description,
    price: skill.price,
    priceAtomic: skill.priceAtomic,
    usageBased: skill.usageBased ?? false,
    network: skill.network,
    groups: skill.groups,
    isActive: skill.isActive,
    verified: skill.verified ?? false,
    creatorAddress: skill.creatorAddress ?? null,
    callCount: skill.callCount ?? 0,
    favoriteCount: skill.favoriteCount ?? 0,
  };
}

/** Runs a tool body; every failure becomes a tool error with a readable message, never a protocol error. */
export async function answer(run: () => Promise<{ text: string; structured: Record<string, unknown> }>): Promise<CallToolResult> {
  try {
    const { text, structured } = await run();
    // The JSON in a text block too, as the MCP specification asks, for clients that read no structuredContent.
    return {
      content: [
        { type: 'text', text },
        { type: 'text', text: JSON.stringify(structured) },
      ],
      structuredContent: structured,
    };
  } catch (error) {
    const failure = toFailure(error);
    return {
      isError: true,
      content: [{ type: 'text', text: failure.message }],
      structuredContent: { error: { code: failure.code, message: failure.message, ...failure.details } },
    };
  }
}

function toFailure(error: unknown): ToolFailure {
  if (error instanceof ToolFailure) return error;
  if (error instanceof MarketError) {
    return new ToolFailure(
      error.code,
      `${error.message}${error.charged === 'no' ? '' : ` (charged: ${error.charged})`}`,
      error.code === 'invalid_input' && 'problems' in error ? { problems: error.problems } : {},
    );
  }
  if (error instanceof TypeError) return new ToolFailure('invalid_argument', error.message.replace(/^(SkillMarket|call): /, ''));
  process.stderr.write(`market mcp: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return new ToolFailure('internal_error', `Internal error: ${(error as Error)?.message ?? String(error)}`);
}
