/**
 * Refusals that need nothing from the skill server, made before it is contacted at all: an
 * inactive skill, a network the client does not pay on, a plain-http endpoint off this machine,
 * input that fails the skill's inputSchema.
 */
import { MarketError } from '../http/errors';
import type { ValueProblem } from '../json-schema/index';
import type { Skill } from '../registry/read';
import { InputValidationError } from './errors';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** @throws MarketError('skill_inactive' | 'network_not_allowed' | 'insecure_endpoint') */
export function checkSkill(skill: Skill, network: string, allowHttp: boolean): void {
  if (!skill.isActive) throw new MarketError('skill_inactive', `${skill.slug} is switched off by its creator`, { slug: skill.slug });
  if (skill.network !== network) {
    throw new MarketError(
      'network_not_allowed',
      `${skill.slug} is paid on ${skill.network}; this client pays on ${network} (option network)`,
      { slug: skill.slug },
    );
  }
  const url = new URL(skill.endpoint);
  if (url.protocol === 'http:' && !allowHttp && !LOOPBACK.has(url.hostname) && !url.hostname.startsWith('127.')) {
    throw new MarketError(
      'insecure_endpoint',
      `${skill.slug} is served over plain http (${url.host}); payment proofs go only over https (option allowHttp)`,
      {
        slug: skill.slug,
      },
    );
  }
}

/**
 * The JSON Schema checker (ajv, about 40 kB of a page's gzipped script) loads at the first input
 * check, so a page that imports the client carries it only once it calls a skill with an inputSchema.
 */
let schemaChecker: Promise<typeof import('../json-schema/index')> | undefined;

function loadSchemaChecker(): Promise<typeof import('../json-schema/index')> {
  schemaChecker ??= import('../json-schema/index');
  return schemaChecker;
}

/**
 * Validates the input as the server will see it (the JSON text, parsed back) against the
 * listing's inputSchema.
 *
 * @throws InputValidationError listing every problem; MarketError('invalid_response') for an unusable schema
 *
 * @example
 * const skill = await market.info('word-count');
 * const body = JSON.stringify({ text: 'one two three' });
 * await checkInput(skill, body); // throws InputValidationError before the skill server is contacted
 */
export async function checkInput(skill: Skill, body: string): Promise<void> {
  if (skill.inputSchema === null) return;
  const { validateAgainst } = await loadSchemaChecker();
  let problems: ValueProblem[];
  try {
    problems = validateAgainst(skill.inputSchema, JSON.parse(body));
  } catch (error) {
    throw new MarketError('invalid_response', `The registry lists an unusable inputSchema for ${skill.slug}: ${(error as Error).message}`, {
      slug: skill.slug,
    });
  }
  if (problems.length > 0) throw new InputValidationError(problems, skill.slug);
}
