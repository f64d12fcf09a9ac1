// Debug-only memory probe for `npm run fuzz`: loaded into the coordinator process with
// `node --expose-gc --import <this file>`, never by the service itself. Over the IPC channel it
// answers "sample" with process.memoryUsage() as is and "settled" with the figures after two
// forced full collections, so the fuzz report can tell retained objects (heapUsed after GC),
// Buffers (external, arrayBuffers) and allocator high-water (RSS minus those) apart.
import process from "node:process";

const gc = globalThis.gc;
if (process.send !== undefined && process.channel !== undefined) {
  // The channel must not keep a coordinator alive once it has shut down.
  process.channel.unref();
  process.on("message", (request) => {
    if (request?.probe !== "sample" && request?.probe !== "settled") return;
    const answer = () =>
      process.send?.({ probe: request.probe, id: request.id, memory: process.memoryUsage() });
    if (request.probe === "sample" || gc === undefined) return answer();
    gc();
    // A second collection after the first one's finalizers (e.g. freed Buffers) have run.
    setImmediate(() => {
      gc();
      answer();
    });
  });
}
