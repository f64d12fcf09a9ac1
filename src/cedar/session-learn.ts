/**
 * What a decided call teaches its session, built the same way wherever calls are decided: the
 * coordinator after its record is stored, replay and `hookbus policy test` after their merge. So
 * the facts a Cedar rule reads come from the merged decision of every policy, Cedar or code,
 * and a replay of an unchanged registry sees what the live run saw.
 */
import { computeActionFacts, type ActionFacts } from "../facts/index.js";
import type { ToolVocabulary } from "../vocabulary/vocabulary.js";
import type { Contacted, DecidedCall } from "./session-facts.js";

export interface CallToLearn {
  hook: string;
  event: Readonly<Record<string, unknown>>;
  /** The merged decision (its `outcome` and `blockedBy`). */
  decision: Readonly<Record<string, unknown>>;
  /** When the call arrived, ms since the epoch. */
  at: number;
  vocabulary: ToolVocabulary;
  /**
   * The call's fact set when the caller computed it already, or computes it on demand (the
   * coordinator's, asked only when hosts are learnt); computed here otherwise.
   */
  facts?: ActionFacts | (() => ActionFacts) | undefined;
  /**
   * Learn hosts and recipient domains (default true). False skips computing a fact set no rule
   * can read: the coordinator holds no Cedar set.
   */
  learnContacted?: boolean;
}

/** The call as session facts learn it; undefined when it teaches nothing (most LLM hooks). */
export function decidedCallOf(call: CallToLearn): DecidedCall | undefined {
  const outcome = typeof call.decision.outcome === "string" ? call.decision.outcome : "";
  const toolName = typeof call.event.toolName === "string" ? call.event.toolName : undefined;
  const toolHook = call.hook === "before_tool_call" || call.hook === "before_tool_result";
  if (outcome !== "block" && (!toolHook || toolName === undefined)) return undefined;
  const decided: DecidedCall = { hook: call.hook, outcome, at: call.at };
  if (typeof call.decision.blockedBy === "string") decided.blockedBy = call.decision.blockedBy;
  if (toolHook && toolName !== undefined) decided.tool = call.vocabulary.classify(toolName);
  const learnContacted = call.learnContacted !== false || call.facts !== undefined;
  if (call.hook === "before_tool_call" && outcome !== "block" && learnContacted)
    decided.contacted = contacted(call);
  return decided;
}

/**
 * Hosts and recipient domains of the call's tool, from its fact set: the hosts of its URLs AND
 * the hosts its shell commands contact (`curl https://paste.example/x` in a shell tool has no
 * URL parameter; its host is in the command's shell facts), as `context.facts.hosts` reads them.
 */
function contacted(call: CallToLearn): Contacted {
  const given = typeof call.facts === "function" ? call.facts() : call.facts;
  const facts = given ?? computeActionFacts(call.hook, call.event, { vocabulary: call.vocabulary });
  const hosts: string[] = [];
  const recipientDomains: string[] = [];
  for (const tool of facts.tools) {
    hosts.push(...tool.summary.hosts);
    for (const command of tool.shell ?? []) hosts.push(...shellHosts(command));
    recipientDomains.push(...tool.recipients.domains);
  }
  return { hosts, recipientDomains };
}

/** The hosts in one command's shell facts (the slot is typed by the parser that filled it). */
function shellHosts(command: unknown): readonly string[] {
  const hosts = (command as { hosts?: unknown } | null)?.hosts;
  return Array.isArray(hosts) ? hosts.filter((h): h is string => typeof h === "string") : [];
}
