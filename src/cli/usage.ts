import { VERSION } from '../version';

export const USAGE = `market ${VERSION}: a marketplace for paid HTTP skills (x402, USDC on Base)

Usage:
  market [registry] [--port N] [--host H]   run the registry (the default command)
  market serve <module.ts> [--port N]       run a creator's paid skill server from a module
  market facilitator [--port N] [--rpc URL] [--network eip155:ID]
                                            verify and settle x402 payments
  market healthcheck [--url URL]            exit 0 when the registry's /health is ok (for containers)
  market --help | -h                        this text
  market --version | -v                     the version

The registry uses PostgreSQL when DATABASE_URL is set, otherwise an embedded database in
MARKET_DATA_DIR (default ./.market/data). Configuration is read from the environment:
PORT, HOST, DATABASE_URL, DATABASE_POOL_SIZE, MARKET_DATA_DIR, LOG_LEVEL, NODE_ENV, MARKET_BODY_LIMIT.
`;
