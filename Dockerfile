# Reprise container image. Build: docker build -t reprise .
# Stage 1 compiles TypeScript; stage 2 carries only production dependencies and dist/.
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The Matrix crypto binding is overridden by a local shim (no binary download at install).
COPY shim ./shim
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Benchmarks live in bench/, outside src/, so dist/ holds only what serves. After the prune,
# every module in dist/ must still load: one that imports a dev dependency fails the build here
# rather than at the first command that reaches it.
COPY .ci/check-dist-loads.js ./.ci/
RUN npm run build && npm prune --omit=dev && node .ci/check-dist-loads.js

FROM node:22-slim
ENV NODE_ENV=production REPRISE_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY shim ./shim
COPY catalog ./catalog
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s CMD node -e "fetch('http://127.0.0.1:8080/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "dist/main.js"]
CMD ["serve"]
