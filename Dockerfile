FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
# .dockerignore keeps node_modules, .data (local databases and their secrets) and .git out.
COPY . .
EXPOSE 3000
# docker-compose runs the same image as `npm run api` and `npm run worker`.
CMD ["npm", "run", "api"]
