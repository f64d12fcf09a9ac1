// The public API from an ES module: the main entry point, the coordinator, testing, pi, privacy
// and redact-stream subpaths.
import * as hookbus from "hookbus";
import * as coordinator from "hookbus/coordinator";
import * as testing from "hookbus/testing";
// hookbus/pi imports without pi-agent-core and pi-ai (optional peers, not installed here).
import * as pi from "hookbus/pi";
import * as privacy from "hookbus/privacy";
import * as redactStream from "hookbus/redact-stream";

console.log(
  JSON.stringify({
    definePolicy: typeof hookbus.definePolicy,
    HookbusClient: typeof hookbus.HookbusClient,
    startCoordinator: typeof coordinator.startCoordinator,
    // Roles load from their own subpaths, never from the main entry (issue 20).
    coordinatorInMain: "startCoordinator" in hookbus,
    findNatsServer: typeof testing.findNatsServer,
    testingInMain: "findNatsServer" in hookbus,
    piAdapter: typeof pi.attachHookbus,
    sealRecord: typeof privacy.sealRecord,
    privacyInMain: "sealRecord" in hookbus,
    StreamRedactor: typeof redactStream.StreamRedactor,
    redactStreamInMain: "StreamRedactor" in hookbus,
  }),
);
