# Image for the API, the worker and the Temporal setup command (temporal-compose.yml); the command
# picks which. Compiled JavaScript (npm run build), with the workflow bundle made at build time.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The build's id, `<package version>-<12 hex of the commit>`: the context has no .git to read it from, and npm run
# build writes it into dist/build-info.json, the Worker Deployment version the workers poll as
# (docs/decisions/0386-worker-deployment-versions.md). Unset, a versioned worker refuses to start naming it.
ARG TRANCHE_BUILD_ID=
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Production whatever starts the image (lib/runtime/config.ts defaults to it too): every secret required, no
# development fallback (docs/decisions/0259-production-by-default.md). Only this stage: the build
# stage's npm ci needs the dev dependencies.
ENV NODE_ENV=production
USER node
