/**
 * The plugin's settings, from `plugins.entries.hookbus.config` in openclaw.json (OpenClaw hands
 * them to `register` as `api.pluginConfig`). Unset fields fall back to the environment hookbus's
 * CLI reads (NATS_URL, NATS_CREDS, HOOKBUS_NKEY_FILE, ...), then to the defaults.
 */
import { z } from "zod";
import { HookbusError } from "../../foundation/errors.js";

/**
 * The default per-call deadline: below OpenClaw's 15 s budget for before_tool_call, so hookbus
 * answers (a coded block when it cannot decide) before OpenClaw gives up on the handler.
 */
export const DEFAULT_OPENCLAW_TIMEOUT_MS = 10_000;
/** The longest per-call deadline: OpenClaw's operator budget for one handler is 600 s at most. */
export const MAX_OPENCLAW_TIMEOUT_MS = 600_000;

const text = (max: number) => z.string().min(1).max(max);

export const OpenClawPluginConfig = z.strictObject({
  /** NATS server URL(s), comma separated. Default: NATS_URL, else nats://127.0.0.1:4222. */
  server: text(4096).optional(),
  /** A NATS creds file (default: NATS_CREDS). */
  creds: text(4096).optional(),
  /** A file holding the agent's nkey seed (default: HOOKBUS_NKEY_FILE). */
  nkey: text(4096).optional(),
  /** Where replies arrive, when NATS permissions confine this agent's inbox. */
  inboxPrefix: text(256).optional(),
  /** The hookbus namespace (default: the library's). */
  namespace: text(128).optional(),
  /**
   * The hookbus agent id: the NATS user's subject token (default "openclaw"). OpenClaw's own
   * agent id (e.g. "main") travels in the context as `openclawAgentId`.
   */
  agentId: text(128).default("openclaw"),
  /** Each hookbus call's deadline in ms (default 10 000). */
  timeoutMs: z.int().positive().max(MAX_OPENCLAW_TIMEOUT_MS).default(DEFAULT_OPENCLAW_TIMEOUT_MS),
});

export type OpenClawPluginConfig = z.infer<typeof OpenClawPluginConfig>;

/** The settings, or HOOKBUS_INVALID_ARGUMENT naming the first bad field. */
export function parsePluginConfig(raw: unknown): OpenClawPluginConfig {
  const parsed = OpenClawPluginConfig.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join(".") || "(config)";
  throw new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `plugins.entries.hookbus.config.${field}: ${issue?.message ?? "invalid"}`,
    { argument: field },
  );
}
