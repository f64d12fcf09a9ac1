/**
 * `hookbus sealer`: run a sealer until SIGTERM/SIGINT. `hookbus sealer keygen`: make a key pair.
 */
import { checkReplicas, defaultReplicas } from "../../bus/streams.js";
import { HookbusError } from "../../foundation/errors.js";
import { createSealKey, sealKeyFromFlags } from "../../log/seal/keys.js";
import { startSealer } from "../../sealer/sealer.js";
import { parseTrustedKeys } from "../../log/sign/keys.js";
import { parseCommand, type Command } from "../command.js";
import { serviceLogger } from "../logger.js";
import { connectWaitMs } from "../../bus/connect.js";
import { openService, runService } from "../service.js";
import { startWithRetry } from "../start-retry.js";
import { HTTP_HELP } from "../../observability/service-http.js";

const HELP = `usage: hookbus sealer [options]
       hookbus sealer keygen

Reads the log in order and appends signed seal batches to the seal stream <NS>_SEALS
(docs/tamper-evidence.md). Run several for availability: one holds the lease and seals, the
others take over when it expires. Runs until SIGTERM/SIGINT, then seals what it read and exits.

options:
  --key-file FILE     the signing key, an nkey seed (env HOOKBUS_SEAL_KEY_FILE; or the seed
                      itself in env HOOKBUS_SEAL_SEED). Required.
  --max-batch N       records per seal batch at most (default 500)
  --max-delay-ms MS   seal a batch at most MS after its first record was read (default 100)
  --lease-ms MS       lease duration; a standby takes over after it (default 5000)
  --replicas N        replicas of the seal stream and the sealer's buckets when this sealer
                      creates them (env HOOKBUS_REPLICAS, default 1)
  --id NAME           this sealer's name in batches and logs (default random)
  --coordinator-keys FILE
                      the trusted coordinator signing keys (\`hookbus auth\` writes
                      <keys>/coordinator-signing-keys; env HOOKBUS_COORDINATOR_KEYS_FILE): each
                      sealed record is checked against its coordinator's signature, and one no
                      trusted coordinator signed is logged and counted
                      (hookbus_seal_signature_findings_total); it is sealed all the same
  --signature-grace MS
                      how long a sealed record may wait for its signature (default 60000)
  --log-level LEVEL   pino level (env LOG_LEVEL, default info)
  --connect-wait MS   keep retrying an unreachable NATS server (or a JetStream that does not
                      answer yet) this long at start, logging each attempt
                      (env HOOKBUS_CONNECT_WAIT_MS, default 30000; 0 = try once)
${HTTP_HELP}
                      (metrics: hookbus_seal_lag_records, hookbus_seal_lag_seconds,
                      hookbus_seal_batches_total, hookbus_sealer_lease_held)

keygen prints a new seed (give it to the sealer, keep it secret) and its public key (give it to
verifiers: --key / HOOKBUS_SEAL_PUBLIC_KEYS).`;

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `--${name} must be a whole number from 1 to 1000000, not ${JSON.stringify(value)}`,
      { argument: name },
    );
  }
  return n;
}

export const sealerCommand: Command = {
  summary: "run a sealer: signed seal batches over the log (tamper evidence)",
  async run(argv, out) {
    const { values, positionals } = parseCommand(argv, {
      "key-file": { type: "string" },
      "max-batch": { type: "string" },
      "max-delay-ms": { type: "string" },
      "lease-ms": { type: "string" },
      id: { type: "string" },
      replicas: { type: "string" },
      "log-level": { type: "string" },
      "connect-wait": { type: "string" },
      http: { type: "string" },
      "coordinator-keys": { type: "string" },
      "signature-grace": { type: "string" },
    });
    if (values.help === true) {
      out.print(HELP);
      return 0;
    }
    if (positionals[0] === "keygen" && positionals.length === 1) {
      const { seed, publicKey } = createSealKey();
      out.print(`seed: ${seed}\npublic key: ${publicKey}`);
      return 0;
    }
    if (positionals.length > 0) {
      out.error(HELP);
      return 2;
    }
    const key = sealKeyFromFlags(
      values["key-file"],
      "the sealer needs its signing key (`hookbus sealer keygen` makes one)",
    );
    const maxBatch = positiveInt(values["max-batch"], "max-batch");
    const maxDelayMs = positiveInt(values["max-delay-ms"], "max-delay-ms");
    const leaseTtlMs = positiveInt(values["lease-ms"], "lease-ms");
    const coordinatorKeys = parseTrustedKeys(
      [process.env.HOOKBUS_COORDINATOR_PUBLIC_KEYS ?? ""],
      values["coordinator-keys"] ?? process.env.HOOKBUS_COORDINATOR_KEYS_FILE,
    );
    const signatureGraceMs = positiveInt(values["signature-grace"], "signature-grace");
    const replicas =
      values.replicas === undefined
        ? defaultReplicas()
        : checkReplicas(Number(values.replicas), "--replicas");
    const logger = serviceLogger(values["log-level"]);
    // Like the coordinator and worker: NATS may come up after the sealer (or be restarting when
    // a supervisor restarts it), and a connection that closes for good exits 1.
    const { nc, http } = await openService(values, values.id ?? "hookbus-sealer", logger);
    return runService({
      nc,
      logger,
      http,
      // Nothing is subscribed before startSealer resolves, so a failed attempt leaves nothing.
      start: () =>
        startWithRetry(
          () =>
            startSealer({
              nc,
              key,
              logger,
              replicas,
              coordinatorKeys,
              ...(signatureGraceMs === undefined ? {} : { signatureGraceMs }),
              ...(values.namespace === undefined ? {} : { namespace: values.namespace }),
              ...(values.id === undefined ? {} : { id: values.id }),
              ...(maxBatch === undefined ? {} : { maxBatch }),
              ...(maxDelayMs === undefined ? {} : { maxDelayMs }),
              ...(leaseTtlMs === undefined ? {} : { leaseTtlMs }),
            }),
          { waitMs: connectWaitMs(values["connect-wait"]), logger, what: "sealer start" },
        ),
      stop: (sealer) => sealer.stop(),
    });
  },
};
