/**
 * The registry's wire contract: TypeBox schemas of every request and answer, with their types.
 * The registry validates and documents its routes with them; every client (consumer, creator,
 * wallet, CLI, MCP server, web pages) reads the answers by them.
 */
export * from './analytics';
export * from './auth';
export * from './common';
export * from './discovery';
export * from './endpoint';
export * from './groups';
export * from './health';
export * from './moderation';
export * from './reviews';
export * from './routes/index';
export * from './skills';
export * from './users';
export * from './wallets';
export * from './webhooks';
export * from './webhook-events';
