/**
 * `--http` for the service commands: the endpoints open before the service connects (so an
 * orchestrator's liveness probe passes while it waits for NATS, and readiness says why it is not
 * ready), and the service is attached once it runs.
 */
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { httpAddressFrom, serveHttp, type Readiness } from "./http.js";

export interface ObservableService {
  readonly metrics: Registry;
  ready(): Readiness;
}

export interface ServiceHttp {
  attach(service: ObservableService): void;
  close(): Promise<void>;
}

const OFF: ServiceHttp = { attach: () => {}, close: () => Promise.resolve() };

/** Serve the endpoints on `--http` / HOOKBUS_HTTP, or nothing when neither is set. */
export async function openServiceHttp(
  flag: string | undefined,
  logger: Logger,
): Promise<ServiceHttp> {
  const address = httpAddressFrom(flag);
  if (address === undefined) return OFF;
  let service: ObservableService | undefined;
  const endpoints = await serveHttp({
    address,
    metrics: () => service?.metrics,
    ready: () => service?.ready() ?? { ready: false, reasons: ["starting"] },
  });
  logger.info({ url: endpoints.url }, "serving /metrics /healthz /readyz");
  return {
    attach: (s) => (service = s),
    close: () => endpoints.close(),
  };
}

export const HTTP_HELP = `  --http HOST:PORT    serve /metrics, /healthz and /readyz there (env HOOKBUS_HTTP; default off)`;
