# One image for every hookbus process: coordinator, policy workers, the CLI, the scripted agent.
FROM node:20.19-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Runtime dependencies only; tsx (a runtime dependency) loads the TypeScript sources and policy modules.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY services ./services
COPY schemas ./schemas
USER node
ENTRYPOINT ["node", "bin/hookbus.js"]
CMD ["--help"]
