/**
 * `npm run bench:cedar`: Cedar policies evaluated in the coordinator against the bare-NATS
 * baseline of `npm run bench` (request → fan-out to 3 responders → JetStream publish → reply), on
 * one server, interleaved, as ratios. The hookbus side has NO worker: a registry with one Cedar
 * entry of 3 rules, then one of 100 rules, on before_tool_call; every call is the benchmark's
 * read_file call, which every rule evaluates and none forbids. Also the p50 of one in-process
 * Cedar evaluation of that call against the 100 rules (repeated: answered from the set's
 * remembered answers; fresh: other params each time, so the engine runs). The 100-rule set is
 * also measured on the bus with a request never seen before on every call (`fresh`: the call's
 * `limit` differs), since real calls differ in every command and a repeated one only shows the
 * memo. The LAST line is machine-readable:
 *   bench-cedar: cedar_p50_ratio_3=… cedar_throughput_ratio_3=… cedar_p50_ratio_100=… cedar_throughput_ratio_100=… cedar_fresh_p50_ratio_100=… cedar_fresh_throughput_ratio_100=… cedar_eval_p50_us_100=… cedar_eval_fresh_p50_us_100=…
 */
import { findNatsServer } from "../src/testing/nats.js";
import { emptySessionFacts, evaluateCedar, parseCedarPolicySet } from "../src/cedar/index.js";
import { startBaseline } from "./baseline.js";
import {
  BENCH_EVENT,
  BenchConnections,
  concurrent,
  laneContext,
  openRoles,
} from "./support/decision-path.js";
import { hundredRules, startCedarPath } from "./support/cedar-path.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SEQUENTIAL_PER_ROUND = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const CONCURRENT_CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 2000);
const EVALUATIONS = 5000;
const CONCURRENCY = 64;

const THREE_RULES = `
@reason("no shell") forbid (principal, action == Action::"before_tool_call", resource is Tool) when { resource.class == "shell" };
@reason("recursive delete") forbid (principal, action == Action::"before_tool_call", resource) when { context.call.paramsText like "*rm -rf*" };
@reason("send after web") forbid (principal, action == Action::"before_tool_call", resource is Tool)
  when { resource.class == "send-message" && context.session.taint.contains("web-fetch") };`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function sequential(call: () => Promise<unknown>, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    into.push(performance.now() - t0);
  }
}

/** p50 of the baseline and the Cedar path (interleaved rounds), and their throughputs. */
async function compare(
  baselineCall: (lane?: number) => Promise<unknown>,
  cedarCall: (lane: number) => Promise<unknown>,
) {
  await sequential(baselineCall, 300, []);
  process.stderr.write("baseline warm\n");
  await sequential(() => cedarCall(0), 300, []);
  process.stderr.write("cedar warm\n");
  const lat = { baseline: [] as number[], cedar: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    await sequential(baselineCall, SEQUENTIAL_PER_ROUND, lat.baseline);
    await sequential(() => cedarCall(0), SEQUENTIAL_PER_ROUND, lat.cedar);
  }
  const tput = { baseline: 0, cedar: 0 };
  for (let round = 0; round < 2; round++) {
    tput.baseline += await concurrent(baselineCall, CONCURRENT_CALLS, CONCURRENCY);
    tput.cedar += await concurrent(cedarCall, CONCURRENT_CALLS, CONCURRENCY);
  }
  const p50 = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  return {
    baselineP50: p50(lat.baseline),
    cedarP50: p50(lat.cedar),
    baselineTput: tput.baseline / 2,
    cedarTput: tput.cedar / 2,
  };
}

/**
 * One evaluation of the benchmark call against the set, in process: p50 in µs. `fresh`: every
 * evaluation has other params, so none is answered from the set's remembered answers.
 */
function evaluationP50Us(cedar: string, fresh = false): number {
  const set = parseCedarPolicySet(cedar);
  let n = 0;
  const input = () => ({
    hook: "before_tool_call" as const,
    context: laneContext(0),
    event: fresh ? { ...BENCH_EVENT, params: { ...BENCH_EVENT.params, limit: n++ } } : BENCH_EVENT,
    session: emptySessionFacts(),
  });
  for (let i = 0; i < 500; i++) evaluateCedar(set, input());
  const times: number[] = [];
  for (let i = 0; i < EVALUATIONS; i++) {
    const request = input();
    const t0 = performance.now();
    evaluateCedar(set, request);
    times.push((performance.now() - t0) * 1000);
  }
  return percentile(
    times.sort((a, b) => a - b),
    50,
  );
}

async function main(): Promise<void> {
  const server = await findNatsServer();
  const conns = new BenchConnections(server.url);
  const roles = await openRoles(conns);
  const baseline = await startBaseline(roles.agent, roles.coordinator, roles.worker);
  const contexts = Array.from({ length: CONCURRENCY }, (_, lane) => laneContext(lane));
  const baselineCall = (lane = 0) =>
    baseline.call({ hook: "before_tool_call", context: contexts[lane]!, event: BENCH_EVENT });
  const stamp = Date.now().toString(36);
  const results: ({ rules: number; fresh: boolean } & Awaited<ReturnType<typeof compare>>)[] = [];
  for (const [rules, cedar, fresh] of [
    [3, THREE_RULES, false],
    [100, hundredRules(), false],
    [100, hundredRules(), true],
  ] as const) {
    process.stderr.write(`cedar ${rules} rules${fresh ? ", fresh requests" : ""}: measuring\n`);
    const name = `benchcedar${rules}${fresh ? "f" : ""}${stamp}`;
    const path = await startCedarPath(roles, name, cedar, { fresh, lanes: CONCURRENCY });
    results.push({ rules, fresh, ...(await compare(baselineCall, path.call)) });
    await path.stop();
  }
  await baseline.stop();
  await conns.drain();
  await server.stop();
  const evalUs = evaluationP50Us(hundredRules());
  const evalUs3 = evaluationP50Us(THREE_RULES);
  const freshUs = evaluationP50Us(hundredRules(), true);
  const freshUs3 = evaluationP50Us(THREE_RULES, true);

  const f = (n: number, d = 3) => n.toFixed(d);
  console.log(
    `nats: ${server.source} ${server.url}; ${ROUNDS}×${SEQUENTIAL_PER_ROUND} sequential calls per side, ${CONCURRENT_CALLS} calls ×2 at concurrency ${CONCURRENCY}; no worker on the Cedar side`,
  );
  console.log(`                     p50 ms   calls/s`);
  for (const r of results) {
    console.log(
      `baseline            ${f(r.baselineP50).padStart(7)}   ${r.baselineTput.toFixed(0).padStart(7)}`,
    );
    console.log(
      `cedar ${String(r.rules).padStart(3)} rules${r.fresh ? " fresh" : "      "}${f(r.cedarP50).padStart(7)}   ${r.cedarTput.toFixed(0).padStart(7)}`,
    );
  }
  console.log(
    `one Cedar evaluation in process, p50: ${f(evalUs3, 1)} µs (3 rules), ${f(evalUs, 1)} µs (100 rules); a request not seen before: ${f(freshUs3, 1)} µs, ${f(freshUs, 1)} µs`,
  );
  const [three, hundred, hundredFresh] = results;
  const ratio = (r: (typeof results)[number] | undefined) =>
    r === undefined
      ? "n/a"
      : `${f(r.cedarP50 / r.baselineP50, 2)} ${f(r.cedarTput / r.baselineTput, 2)}`.split(" ");
  const [p3, t3] = ratio(three);
  const [p100, t100] = ratio(hundred);
  const [pf100, tf100] = ratio(hundredFresh);
  console.log(
    `bench-cedar: cedar_p50_ratio_3=${p3} cedar_throughput_ratio_3=${t3} cedar_p50_ratio_100=${p100} cedar_throughput_ratio_100=${t100} cedar_fresh_p50_ratio_100=${pf100} cedar_fresh_throughput_ratio_100=${tf100} cedar_eval_p50_us_100=${f(evalUs, 1)} cedar_eval_fresh_p50_us_100=${f(freshUs, 1)}`,
  );
}

await main();
