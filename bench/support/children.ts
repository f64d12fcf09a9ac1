/**
 * Child processes a benchmark starts and must not leave behind: each is waited for until it says
 * it is ready (a line on its output, within a deadline; its output is in the error when it exits
 * or misses the deadline), and all are stopped on every way out of the benchmark: `stop()` on
 * the normal and the failing path, a kill when this process exits, and SIGINT/SIGTERM (Ctrl-C)
 * stop them before this process exits with the signal's status.
 */
import type { RoleProcess } from "./cli.js";

/** How long a child may take to drain after SIGTERM before it is killed. */
const STOP_GRACE_MS = 10_000;

export class ChildGroup {
  private readonly running = new Map<RoleProcess, string>();
  private readonly onExit = () => {
    for (const role of this.running.keys()) role.child.kill("SIGKILL");
  };
  private readonly onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`${signal}: stopping ${this.running.size} child processes\n`);
    void this.stop().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };

  constructor() {
    process.on("exit", this.onExit);
    process.once("SIGINT", this.onSignal);
    process.once("SIGTERM", this.onSignal);
  }

  /** Track `role` (named `name` in errors) until it exits. */
  add(name: string, role: RoleProcess): RoleProcess {
    this.running.set(role, name);
    void role.exited.then(() => this.running.delete(role));
    return role;
  }

  /**
   * Resolves once `role`'s output (stdout or stderr) matches `ready`; rejects, with what it
   * printed, when it exits first or `deadline` (epoch ms) passes.
   */
  async ready(role: RoleProcess, ready: RegExp, deadline: number): Promise<void> {
    const name = this.running.get(role) ?? `pid ${role.pid}`;
    const failure = (why: string) =>
      new Error(`${name} ${why}; its output:\n${role.output().slice(-4000) || "(none)"}`);
    let cleanup = () => {};
    try {
      await new Promise<void>((resolve, reject) => {
        const check = () => {
          if (ready.test(role.output())) resolve();
        };
        const timer = setTimeout(
          () => reject(failure(`was not ready within its deadline (${ready})`)),
          Math.max(0, deadline - Date.now()),
        );
        role.child.stdout?.on("data", check);
        role.child.stderr?.on("data", check);
        void role.exited.then((code) => reject(failure(`exited (code ${code}) before ready`)));
        cleanup = () => {
          clearTimeout(timer);
          role.child.stdout?.off("data", check);
          role.child.stderr?.off("data", check);
        };
        check();
      });
    } finally {
      cleanup();
    }
  }

  /** SIGTERM every child and wait for it; one still running after the grace period is killed. */
  async stop(): Promise<void> {
    const roles = [...this.running.keys()];
    for (const role of roles) role.child.kill("SIGTERM");
    await Promise.all(
      roles.map(async (role) => {
        const timer = setTimeout(() => role.child.kill("SIGKILL"), STOP_GRACE_MS);
        await role.exited;
        clearTimeout(timer);
      }),
    );
  }

  /** Stop the children and stop watching this process's exit and signals for them. */
  async close(): Promise<void> {
    try {
      await this.stop();
    } finally {
      process.off("exit", this.onExit);
      process.off("SIGINT", this.onSignal);
      process.off("SIGTERM", this.onSignal);
    }
  }
}
