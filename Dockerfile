# Image for the API and the worker (temporal-compose.yml); the command picks which.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm install --no-save tsx@4
COPY . .
USER node
