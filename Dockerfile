# syntax=docker/dockerfile:1
# The registry (and facilitator, and skill server) as one self-contained binary.
#   docker build -t skill-market .
#   docker run -p 3000:3000 -v market-data:/data skill-market                # embedded database
#   docker run -p 3000:3000 -e DATABASE_URL=postgres://… skill-market        # PostgreSQL

FROM node:20-bookworm-slim AS install
WORKDIR /app
COPY package.json package-lock.json ./
# The SDK is an npm workspace (sdk/): npm ci needs its manifest.
COPY sdk/package.json ./sdk/package.json
# Bun arrives as an npm dev dependency, so npm alone installs the whole toolchain.
RUN npm ci --no-audit --no-fund

FROM install AS build
COPY tsconfig.json bunfig.toml ./
COPY src ./src
COPY sdk ./sdk
COPY scripts ./scripts
COPY drizzle ./drizzle
RUN npm run build && ./dist/market --version

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin market \
 && mkdir -p /data && chown market:market /data
COPY --from=build /app/dist/market /usr/local/bin/market
USER market
WORKDIR /data
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 MARKET_DATA_DIR=/data/db
EXPOSE 3000
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["market", "healthcheck"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["market"]
CMD ["registry"]
