/** `hookbus coordinator`: run one coordinator until SIGTERM/SIGINT, then drain. */
import { startCoordinator } from "../../coordinator/coordinator.js";
import { checkReplicas } from "../../bus/streams.js";
import { HookbusError } from "../../foundation/errors.js";
import { parseCommand, type Command } from "../command.js";
import { serviceLogger } from "../logger.js";
import { openService, runService } from "../service.js";
import { startWithRetry } from "../start-retry.js";
import { connectWaitMs } from "../../bus/connect.js";
import { HTTP_HELP } from "../../observability/service-http.js";

import { requireKek } from "../../privacy/kek.js";
import { signingKeyFromFile, type RecordSigningKey } from "../../log/sign/keys.js";

const HELP = `usage: hookbus coordinator [options]

Runs one coordinator until SIGTERM/SIGINT, then drains (answers what is in flight) and exits.

options:
  --log-level LEVEL   fatal|error|warn|info|debug|trace|silent (env LOG_LEVEL, default info);
                      logs are NDJSON on stdout
  --connect-wait MS   keep retrying an unreachable NATS server (or a JetStream that does not
                      answer yet) this long at start, logging each attempt
                      (env HOOKBUS_CONNECT_WAIT_MS, default 30000; 0 = try once)
  --log-max-age MS    max age of the log stream when this coordinator creates it
                      (env HOOKBUS_LOG_MAX_AGE_MS, default 0 = keep forever)
  --log-max-bytes N   size cap of the log stream when created (env HOOKBUS_LOG_MAX_BYTES, -1 = none)
  --id NAME           this coordinator's name in records and logs (default random)
  --replicas N        copies of the streams and buckets it creates in a JetStream cluster
                      (env HOOKBUS_REPLICAS, default 1; 3 in a cluster)
  --max-in-flight N   calls handled at once; beyond it calls are answered HOOKBUS_OVERLOADED
                      and the agent re-sends them to another coordinator (default 1024)
  --sign-key-file FILE
                      the key this coordinator signs its records with, the seed \`hookbus auth\`
                      issued it (<keys>/coordinator-<name>.sign.nk; env HOOKBUS_SIGN_KEY_FILE).
                      Without it records are unsigned (a warning; docs/security.md)
  --require-signing   refuse to start without a signing key (env HOOKBUS_REQUIRE_SIGNING=1)
  --encrypt           encrypt the personal fields of every record per data subject, so
                      \`hookbus erase\` can erase them (env HOOKBUS_ENCRYPT=1; the key-encryption
                      key from HOOKBUS_PRIVACY_KEK or HOOKBUS_PRIVACY_KEK_FILE; docs/privacy.md)
${HTTP_HELP}`;

function numberFlag(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--${name} must be a number, got ${JSON.stringify(value)}`,
      { argument: name },
    );
  }
  return n;
}

function signingFlags(
  file: string | undefined,
  require: boolean,
): { signingKey?: RecordSigningKey; requireSigning?: boolean } {
  const path = file ?? process.env.HOOKBUS_SIGN_KEY_FILE;
  const requireSigning = require || process.env.HOOKBUS_REQUIRE_SIGNING === "1";
  if (path !== undefined && path !== "") return { signingKey: signingKeyFromFile(path) };
  if (requireSigning) {
    throw new HookbusError(
      "HOOKBUS_SIGN_KEY_INVALID",
      "--require-signing: pass --sign-key-file FILE (env HOOKBUS_SIGN_KEY_FILE), the seed `hookbus auth` issued this coordinator",
    );
  }
  return {};
}

export const coordinatorCommand: Command = {
  summary: "run a coordinator until SIGTERM/SIGINT",
  async run(argv, out) {
    const { values } = parseCommand(argv, {
      "log-level": { type: "string" },
      "connect-wait": { type: "string" },
      http: { type: "string" },
      "log-max-age": { type: "string" },
      "log-max-bytes": { type: "string" },
      id: { type: "string" },
      replicas: { type: "string" },
      "max-in-flight": { type: "string" },
      "sign-key-file": { type: "string" },
      "require-signing": { type: "boolean" },
      encrypt: { type: "boolean" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    const maxAgeMs = numberFlag(
      values["log-max-age"] ?? process.env.HOOKBUS_LOG_MAX_AGE_MS,
      "log-max-age",
    );
    const maxBytes = numberFlag(
      values["log-max-bytes"] ?? process.env.HOOKBUS_LOG_MAX_BYTES,
      "log-max-bytes",
    );
    // Also the default of the buckets this process creates (registry, chain).
    if (values.replicas !== undefined) {
      process.env.HOOKBUS_REPLICAS = String(checkReplicas(Number(values.replicas), "--replicas"));
    }
    const maxInFlight = numberFlag(values["max-in-flight"], "max-in-flight");
    if (maxInFlight !== undefined && (!Number.isInteger(maxInFlight) || maxInFlight < 1)) {
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `--max-in-flight must be a positive integer, got ${values["max-in-flight"]}`,
        { argument: "max-in-flight" },
      );
    }
    // Read (and a missing key refused) before connecting: a bad key is not worth retrying.
    const signing = signingFlags(values["sign-key-file"], values["require-signing"] === true);
    const encrypt = values.encrypt === true || process.env.HOOKBUS_ENCRYPT === "1";
    const privacy = encrypt ? { privacy: { kek: requireKek() } } : {};
    const logger = serviceLogger(values["log-level"]);
    const { nc, http } = await openService(values, values.id ?? "hookbus-coordinator", logger);
    return runService({
      nc,
      logger,
      http,
      // A JetStream that does not answer yet (a node restarting) is waited for, like NATS itself.
      start: () =>
        startWithRetry(
          () =>
            startCoordinator({
              nc,
              logger,
              ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
              ...(values.id === undefined ? {} : { id: values.id }),
              ...(maxInFlight === undefined ? {} : { maxInFlight }),
              ...signing,
              ...privacy,
              log: {
                ...(maxAgeMs === undefined ? {} : { maxAgeMs }),
                ...(maxBytes === undefined ? {} : { maxBytes }),
              },
            }),
          { waitMs: connectWaitMs(values["connect-wait"]), logger, what: "coordinator start" },
        ),
      stop: (coordinator) => coordinator.stop(),
    });
  },
};
