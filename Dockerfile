# The example Redis provider as a container: compiled JavaScript run by node itself (no npm, no
# tsx in between), so the runtime's SIGTERM reaches the provider, which drains its calls and
# stops its embedded redis-servers. Build: docker build -t provider-kit-redis .
# Run:   docker run --init -e PROVIDER_PASSWORD=... -p 8080:8080 -v redis-data:/data provider-kit-redis

FROM node:20-bookworm-slim AS build
WORKDIR /app
# The workspace's manifests first, so the install layer is reused while only sources change.
COPY package.json package-lock.json tsconfig.json ./
COPY packages/provider-kit/package.json packages/provider-kit/
COPY packages/redis-store/package.json packages/redis-store/
COPY packages/conformance/package.json packages/conformance/
COPY packages/platform/package.json packages/platform/
COPY examples/redis/package.json examples/redis/
# --ignore-scripts: `prepare` (the build) needs the sources, copied below.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY packages ./packages
COPY examples ./examples
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
# The workspace's packages, which node_modules links to: their package.json and dist/ (and the
# platform's console files, which its redis-server supervision module sits beside).
COPY --from=build /app/packages ./packages
COPY --from=build /app/examples/redis/package.json ./examples/redis/
COPY --from=build /app/examples/redis/dist ./examples/redis/dist
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
ENTRYPOINT ["node", "examples/redis/dist/main.js"]
