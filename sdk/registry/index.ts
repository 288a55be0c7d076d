/**
 * Talking to a registry: its wire contract (every request and answer as a TypeBox schema with its
 * type) and the one typed client every part of the SDK, the CLI, the MCP server and the web pages use.
 *
 * @module skill-market/registry
 */
export * from './contract/index';
export {
  DEFAULT_API_URL,
  RegistryClient,
  type CallArgs,
  type CallOptions,
  type Page,
  type RegistryClientOptions,
  type RetryOptions,
} from './client';
export { ListedSkillSchema, RegisteredSkillSchema, readAnswer, readSkill, readSkills, type RegisteredSkill, type Skill } from './read';
export { MarketError, RegistryError } from '../http/errors';
