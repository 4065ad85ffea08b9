# cutroom hosted over Streamable HTTP: each caller brings their own Video Jungle key (Authorization: Bearer or
# X-API-Key). Build: docker build -t cutroom .   Run: docker run -p 8808:8808 cutroom
# The build stage compiles; the runtime stage has Debian's ffmpeg, the production dependencies and the built
# server, and runs as the unprivileged `node` user.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.views.json ./
COPY scripts/build-views.mjs ./scripts/
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends ffmpeg fonts-dejavu-core pocketsphinx pocketsphinx-en-us wordnet-base \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Previews, inspections and exports; mount a volume shared by all replicas here (docs/hosting.md: "Deploying replicas").
RUN mkdir -p /var/cache/cutroom && chown node:node /var/cache/cutroom
ENV NODE_ENV=production \
    VJ_BACKEND=remote \
    CUTROOM_HTTP_HOST=0.0.0.0 \
    CUTROOM_HTTP_PORT=8808 \
    CUTROOM_CACHE_DIR=/var/cache/cutroom
USER node
EXPOSE 8808
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:8808/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# SIGTERM drains the calls in flight (CUTROOM_HTTP_DRAIN_MS, 30 s by default): give `docker stop -t` at least that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/index.js"]
CMD ["--http"]
