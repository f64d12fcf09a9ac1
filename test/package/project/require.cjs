// The public API from CommonJS: require() of the ES module package (Node >= 22.12, 20.19).
const hookbus = require("hookbus");
const testing = require("hookbus/testing");

console.log(
  JSON.stringify({
    definePolicy: typeof hookbus.definePolicy,
    HookbusClient: typeof hookbus.HookbusClient,
    findNatsServer: typeof testing.findNatsServer,
  }),
);
