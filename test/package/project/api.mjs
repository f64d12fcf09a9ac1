// The public API from an ES module: the main entry point and the testing subpath.
import * as hookbus from "hookbus";
import * as testing from "hookbus/testing";

console.log(
  JSON.stringify({
    definePolicy: typeof hookbus.definePolicy,
    HookbusClient: typeof hookbus.HookbusClient,
    startCoordinator: typeof hookbus.startCoordinator,
    findNatsServer: typeof testing.findNatsServer,
    testingInMain: "findNatsServer" in hookbus,
  }),
);
