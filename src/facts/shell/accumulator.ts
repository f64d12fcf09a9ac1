/**
 * Gathers the facts of one command and its nested scripts, then derives the booleans and string
 * sets a Cedar rule tests. Derived fields are computed here only, from the lists, so they can
 * never disagree with them.
 */
import {
  SHELL_FACTS_VERSION,
  type CommandFact,
  type DangerousCall,
  type DeletionFact,
  type InterpreterFeed,
  type NetworkFact,
  type PathClass,
  type RedirectFact,
  type ShellFacts,
  type Unparsed,
} from "./schema.js";

/** Shells, and the builtins that run shell code in the current shell. */
const SHELL_NAMES = /^(?:sh|bash|zsh|dash|ksh|ash|mksh|fish|tcsh|csh|posh|yash|rbash|source|\.)$/u;
const TARGET_ROOT = new Set<PathClass>(["root"]);
const TARGET_HOME = new Set<PathClass>(["home"]);
const TARGET_SYSTEM = new Set<PathClass>(["system"]);

export class FactsAccumulator {
  readonly commands: CommandFact[] = [];
  readonly redirects: RedirectFact[] = [];
  readonly network: NetworkFact[] = [];
  readonly feeds: InterpreterFeed[] = [];
  readonly deletions: DeletionFact[] = [];
  readonly calls: DangerousCall[] = [];
  readonly programs = new Set<string>();
  readonly wrappers = new Set<string>();
  elevated = false;
  dynamic = false;
  unparsed: Unparsed | undefined;
  /** Characters handed to the parser so far, nested scripts included. */
  parsedLength = 0;

  addCall(call: DangerousCall): void {
    if (!this.calls.some((c) => c.interpreter === call.interpreter && c.call === call.call)) {
      this.calls.push(call);
    }
  }

  finish(): ShellFacts {
    const classes = new Set(this.deletions.flatMap((d) => d.targets.map((t) => t.class)));
    const has = (set: ReadonlySet<PathClass>): boolean => [...classes].some((c) => set.has(c));
    const decodes = new Set(this.feeds.flatMap((f) => f.decodes));
    const decodedFeeds = this.feeds.filter((f) => f.decodes.length > 0);
    const facts: ShellFacts = {
      version: SHELL_FACTS_VERSION,
      commands: this.commands,
      redirects: this.redirects,
      network: this.network,
      interpreterFeeds: this.feeds,
      deletions: this.deletions,
      dangerousCalls: this.calls,
      programs: [...this.programs],
      hosts: [...new Set(this.network.flatMap((n) => n.hosts))],
      decodes: [...decodes],
      deleteTargetClasses: [...classes],
      wrappers: [...this.wrappers],
      deletes: this.deletions.length > 0,
      deletesRecursively: this.deletions.some((d) => d.recursive),
      targetsRoot: has(TARGET_ROOT),
      targetsHome: has(TARGET_HOME),
      targetsSystem: has(TARGET_SYSTEM),
      deletesUnknownTarget: classes.has("unknown"),
      pipesIntoInterpreter: this.feeds.length > 0,
      pipesDecodedIntoInterpreter: decodedFeeds.length > 0,
      pipesDecodedIntoShell: decodedFeeds.some((f) => SHELL_NAMES.test(f.interpreter)),
      pipesNetworkIntoInterpreter: this.feeds.some((f) => f.fromNetwork.length > 0),
      usesNetwork: this.network.length > 0,
      uploads: this.network.some((n) => n.upload),
      hasDangerousCall: this.calls.length > 0,
      runsDynamicProgram: this.dynamic,
      elevated: this.elevated,
    };
    if (this.unparsed !== undefined) facts.unparsed = this.unparsed;
    return facts;
  }
}
