# The example Redis provider as a container: compiled JavaScript run by node itself (no npm, no
# tsx in between), so the runtime's SIGTERM reaches the provider, which drains its calls and
# stops its embedded redis-servers. Build: docker build -t provider-kit-redis .
# Run:   docker run --init -e PROVIDER_PASSWORD=... -p 8080:8080 -v redis-data:/data provider-kit-redis

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` (the build) needs the sources, copied below.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY examples ./examples
# The example's tests (compiled with it) import the shared test helpers.
COPY test/support ./test/support
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# redis-server runs the embedded servers and the dedicated instances; util-linux (setpriv)
# gives the embedded servers a parent-death signal.
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server util-linux \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir /data && chown node:node /data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/examples/redis ./dist/examples/redis
USER node
ENV NODE_ENV=production PORT=8080 DATA_DIR=/data LOG_FORMAT=json
VOLUME /data
EXPOSE 8080
# Readiness as the platform asks for it: every component (registry, administered Redis) answers.
HEALTHCHECK --interval=30s --timeout=10s \
    CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthcheck?check=all`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node as PID 1 gets no default signal handlers; main.js installs its own for SIGTERM, SIGINT and
# SIGHUP. `docker run --init` (or tini) is still advised: it reaps the dedicated instances' processes
# that outlive a provider restart inside the container.
ENTRYPOINT ["node", "dist/examples/redis/main.js"]
