# Build stage: every dependency, `npm run build` (tsc into dist/ and the prebuilt workflow bundle),
# then the development dependencies dropped.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run stage: dist/ and the production dependencies only, as the unprivileged `node` user. No tsx: the
# roles are `node dist/api/server.js` (this image's command), `node dist/worker/main.js` and
# `node dist/bin/sv.js` (the operator CLI).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 SV_DATA_DIR=/app/data
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /app/data/media && chown -R node:node /app/data
USER node
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/api/server.js"]
