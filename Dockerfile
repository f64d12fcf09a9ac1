# One image for every hookbus process: coordinator, policy workers, the CLI, the scripted agent.
# test/package/docker-install.test.ts repeats the runtime stage's install and starts the
# processes from it (there is no Docker engine on the project's CI machines).

# Build stage: compile src/ to dist/ (needs the dev dependencies: TypeScript, @types/node).
# services/policies/package.json declares the example policies' own dependencies (an npm
# workspace of the one lock file): npm ci needs it to match the lock.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY services/policies/package.json ./services/policies/
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Runtime stage: runtime dependencies only. The CLI runs the compiled dist/; tsx (a runtime
# dependency) loads TypeScript policy modules and the example services, which import src/. The
# example policies' own dependencies (the PII redactor's validator and libphonenumber-js) come
# from their workspace, services/policies/package.json: the hookbus package does not need them.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY services/policies/package.json ./services/policies/
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY src ./src
COPY services ./services
COPY schemas ./schemas
USER node
ENTRYPOINT ["node", "bin/hookbus.js"]
CMD ["--help"]
