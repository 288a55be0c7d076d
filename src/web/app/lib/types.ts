/** The registry's answers, as the pages read them (see src/registry/modules/*\/model.ts). */
export interface Skill {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  price: string;
  priceAtomic: string;
  currency: 'USDC';
  network: string;
  endpoint: string;
  paymentAddress: string;
  inputSchema: Record<string, unknown> | null;
  outputSchema: Record<string, unknown> | null;
  category: string | null;
  groups: string[];
  isActive: boolean;
  verified: boolean;
  creatorId: string;
  creatorAddress: string;
  callCount: number;
  viewCount: number;
  favoriteCount: number;
  totalRevenue: string;
  createdAt: string;
  updatedAt: string;
}

export interface Creator {
  id: string;
  walletAddress: string;
  name: string | null;
  avatar: string | null;
  bio: string | null;
  createdAt: string;
}

export interface Group {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  icon: string | null;
  creatorId: string;
  isActive: boolean;
}

export interface Analytics {
  skillId: string;
  callCount: number;
  viewCount: number;
  favoriteCount: number;
  totalRevenue: string;
  daily: { date: string; views: number; calls: number; revenue: string }[];
}

/** What `GET /web/config` answers (built by src/web/config.ts). */
export interface PageConfig {
  /** The registry's public origin, for copy-ready snippets (`--registry`, curl). */
  publicUrl: string;
  network: { id: string; name: string; chainId: number };
  /** The token payments are made in on this registry's network (USDC, or a test token locally). */
  asset: { address: string; decimals: number };
  /** Absent on a local chain: transaction hashes show unlinked. */
  explorer: { name: string; url: string } | null;
  /** Identity-provider (Privy) login is offered only when the registry verifies its tokens. */
  privyAppId: string | null;
  /** `market dev`: the page offers the dev-only demo wallet. Never on in production. */
  devMode: boolean;
}
