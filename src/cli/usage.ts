import { VERSION } from '../version';

export const USAGE = `market ${VERSION}: a marketplace for paid HTTP skills (x402, USDC on Base)

Usage:
  market [registry] [--port N] [--host H]   run the registry (the default command)
  market serve <module.ts> [--dev [D]] [--port N] [--host H] [--wallet W] [--endpoint URL] [--groups a,b]
               [--facilitator URL] [--api-url URL] [--network eip155:ID] [--asset 0x… [--asset-name N] [--asset-version V] [--asset-decimals D]] [--rpc-url URL]
               [--settlement broadcast|confirmed] [--verify at-settlement|first] [--no-register]
               [--channels on|off] [--channels-dir DIR] [--channels-store facilitator] [--repair-channels]
               [--claim-above PRICE] [--claim-within SECONDS] [--settle-within SECONDS]
               [--trials-dir DIR] [--trial-ip-wallets N] [--trusted-proxies IP,IP]
               [--service-name NAME] [--icon-url URL] [--contact EMAIL|URL]
                                            run a creator's paid skill server (default port 3002)
                                            from a module exporting skill(...)s; the SDK is built in.
                                            Wallet from MARKET_WALLET_ADDRESS / MARKET_WALLET_KEY, key
                                            from MARKET_API_KEY; MARKET_ENDPOINT, MARKET_FACILITATOR_URL,
                                            MARKET_NETWORK, MARKET_API_URL, MARKET_SETTLEMENT, MARKET_VERIFY
                                            as defaults of the flags; --dev D: everything from the
                                            'market dev' of D (default .market/dev), a free port
  market group new <name> [--description D] | list
                                            a creator's groups (skills name at least one)
  market skill list | price <slug> <price>  a creator's listings; the price a skill server asks
  market skill trial <slug> <calls>/<period>|off
                                            its free trial (e.g. 3/day)
  market skill tiers <slug> <after>:<price>,…|off [--period month]
                                            its volume prices (e.g. 1000:$0.0008)
                                            (it follows its listing within seconds)
                                            group and skill take --dev [D] or --api-url / --api-key
  market fund <address> [amount] --dev [D]  mint test USDC (default $10) on the chain of market dev
  market facilitator [--port N] [--host H] [--rpc URL] [--network eip155:ID]
                                            verify and settle x402 payments (default port 3001;
                                            relayer key from FACILITATOR_PRIVATE_KEY)
  market healthcheck [--url URL]            exit 0 when the registry's /health is ok (for containers)
  market doctor [--dev [dir]] [--network N] [--rpc-url U] [--asset A] [--facilitator U]
                [--registry U] [--api-key K] [--endpoint U] [--channels-from-block B] [--json]
                                            check a deployment and say what is wrong: the RPC and its
                                            chain, the token, the channel contract, the facilitator,
                                            its channels and relayers' ETH, MARKET_CHANNELS_FROM_BLOCK,
                                            the registry, a creator key, a skill server (exit 1 on a fault)
  market login --api-key K [--api-url U]   store a registry URL and API key for the commands below
  market wallet new [--label L] [--keystore PATH]
                                            make a spending wallet: key generated and encrypted here
                                            (passphrase from MARKET_KEYSTORE_PASSPHRASE or a prompt),
                                            only the address registered; it becomes the active one
  market wallet list | balance [--json]     your wallets; the active one's live USDC balance
  market wallet label <address> <label> | --clear
  market wallet revoke <address>            stop using a wallet (funds and keystore untouched)
                                            wallet and login take --api-url / --api-key, else
                                            MARKET_API_URL / MARKET_API_KEY, else the stored login
  market search [query] [--group G] [--max-price P] [--sort S] [--limit N] [--cursor C] [--json]
                                            find skills (no wallet needed)
  market info <slug> [--json]               one skill's listing: price, endpoint, schemas
  market call <slug> '<json>' [--max-price P] [--fast] [--no-trial]
                                            pay and call a skill (its free trial first, unless
                                            --no-trial): result as JSON on stdout, receipt on stderr;
                                            wallet from MARKET_PRIVATE_KEY (--wallet-key)
                                            or --keystore PATH + MARKET_KEYSTORE_PASSPHRASE; search,
                                            info and call take --api-url, --api-key, --network and
                                            --asset ADDRESS (a token allowed besides USDC); --dev [D]
                                            uses the marketplace of 'market dev --dir D' (default
                                            .market/dev) and its demo wallet; so do wallet and mcp;
                                            --payment auto|exact|channel|upto (MARKET_PAYMENT; upto: usage-
                                            based prices) and --max-deposit (MARKET_MAX_DEPOSIT, default $1)
                                            for x402 payment channels
  market channels [--refund ID|all | --withdraw ID | --finalize ID] [--json]
                                            payment channels call opened (channels.json in the config
                                            folder): server, deposit, charged, claimed (MARKET_RPC_URL);
                                            --refund gets the unspent deposit back from the server (no
                                            ETH needed), else starts the timed withdrawal; --withdraw
                                            starts the timed withdrawal (the wallet pays gas), --finalize
                                            pays it out after the channel's delay
  market dev [module.ts] [--dir D] [--fresh] [--port N] [--facilitator-port N] [--skills-port N] [--chain-port N]
                                            the whole marketplace on this machine for trying it out:
                                            a local chain (anvil) with test USDC, registry, facilitator,
                                            the example skills (or module.ts, reloaded when saved) and a
                                            funded demo wallet; state in D (default MARKET_DEV_DIR, else ./.market/dev);
                                            ports default 3000, 3001, 3002, 8545
  market mcp [--http [--port N] [--host H]] [--keystore PATH] [--max-price P] [--budget B]
             [--period hour|day|week|month] [--confirm-above P] [--allow SLUG|CREATOR ...] [--data-dir D]
                                            the MCP server for AI agents (stdio; Streamable HTTP at /mcp
                                            on port 3005 with --http): search, read, pay and call skills
                                            within limits (default $0.10 a call, $1 a day, kept in
                                            spending.json). Wallet: MARKET_KEYSTORE + MARKET_KEYSTORE_PASSPHRASE
                                            or MARKET_KEYSTORE_PASSPHRASE_FILE (none: discovery only);
                                            MARKET_MCP_* variables mirror the flags (docs/consumers.md);
                                            --print-config prints snippets for agent hosts
  market --help | -h                        this text
  market --version | -v                     the version

The registry uses PostgreSQL when DATABASE_URL is set, otherwise an embedded database in
MARKET_DATA_DIR (default ./.market/data). Configuration is read from the environment:
PORT, HOST, DATABASE_URL, DATABASE_POOL_SIZE, MARKET_DATA_DIR, LOG_LEVEL, NODE_ENV, MARKET_BODY_LIMIT.
The facilitator also reads FACILITATOR_PRIVATE_KEY (required), FACILITATOR_RPC_URL,
FACILITATOR_NETWORK, FACILITATOR_ASSETS, FACILITATOR_RECEIPT_TIMEOUT_MS,
FACILITATOR_POLL_INTERVAL_MS, FACILITATOR_RECONCILE_INTERVAL_MS, FACILITATOR_SETTLEMENT,
FACILITATOR_BATCH_MAX, FACILITATOR_BATCH_MS, FACILITATOR_BATCH_EAGER,
FACILITATOR_AUTHORIZER_KEY (the batch-settlement receiver authorizer; default derived from the
relayer key), and for the Bazaar catalogue's live 402 reads FACILITATOR_DISCOVERY_REFRESH_MS,
FACILITATOR_DISCOVERY_TIMEOUT_MS and FACILITATOR_DISCOVERY_ALLOW_PRIVATE.
`;
