/**
 * hookbus/testing: helpers for tests of policies and agents, kept out of the main entry point
 * (like @temporalio/testing). `findNatsServer` finds or starts a NATS server with JetStream.
 */
export {
  findNatsServer,
  findNatsServerBinary,
  natsAnswers,
  type NatsServerHandle,
  type FindNatsOptions,
} from "./nats.js";
export { freePort } from "./free-port.js";
