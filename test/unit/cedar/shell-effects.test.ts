/**
 * The effect facts of a call's commands (src/cedar/shell-effects.ts, effect-tables.ts) and the
 * path labels of globs and find (src/facts/path-glob.ts): each class is set by spellings other
 * than the corpus's, and left unset by the everyday command next to it.
 */
import { describe, expect, it } from "vitest";
import { cedarFacts, computeCallFacts } from "../../../src/cedar/action-context.js";
import { findPathFacts, pathFacts } from "../../../src/facts/path.js";

type Facts = Record<string, unknown> & { path: { credential: boolean; sensitive: string[] } };

function factsOf(command: string): Facts {
  const call = computeCallFacts("before_tool_call", { toolName: "Bash", params: { command } });
  return cedarFacts(call.tools[0]!) as Facts;
}

const CLASSES: Record<string, { set: string[]; unset: string[] }> = {
  deletesSensitive: {
    set: ["rm /etc/hosts", "sudo shred /etc/shadow", "truncate -s0 /etc/fstab", "mv /usr/bin /tmp"],
    unset: ["rm -f out.log", "rm -rf ./dist", "truncate -s 0 app.log", "mv a.txt b.txt"],
  },
  crashesSystem: {
    set: ["kill -9 -1", "kill -s KILL 1", "echo c >/proc/sysrq-trigger", "killall5 -9"],
    unset: ["kill 1234", "kill -9 1234", "kill -1 4321", "cat /proc/cpuinfo"],
  },
  readsSecretStore: {
    set: ["security find-internet-password -w", "gpg --export-secret-subkeys", "pass show db"],
    unset: ["gpg --export --armor me", "security list-keychains", "pass ls"],
  },
  installsPersistence: {
    set: [
      "launchctl submit -l x -- /tmp/x",
      "systemctl enable evil",
      "git config core.sshCommand x",
    ],
    unset: ["launchctl list", "systemctl status nginx", "git config core.autocrlf false"],
  },
  destroysInfrastructure: {
    set: [
      "kubectl delete pod api-0",
      "aws dynamodb delete-table --table-name t",
      "sqlite3 a.db 'DROP TABLE t'",
    ],
    unset: ["kubectl get pods", "aws dynamodb list-tables", "sqlite3 a.db 'SELECT 1'"],
  },
  privilegedContainer: {
    set: [
      "docker run --pid host alpine",
      "docker run -v /etc:/e alpine",
      "nerdctl run --cap-add ALL x",
    ],
    unset: [
      "docker run --rm -v ./data:/data alpine",
      "docker run -p 8080:80 nginx",
      "docker images",
    ],
  },
  reachesInternal: {
    set: [
      "curl http://192.168.0.1/",
      "wget http://172.16.0.9/x",
      "curl localhost:8500/v1/kv",
      "nc -U /tmp/s.sock",
    ],
    unset: ["curl http://localhost:3000/", "curl https://example.com/", "nc -z example.com 443"],
  },
  erasesTraces: {
    set: ["history -cw", "rm -f ~/.python_history", "> ~/.bash_history", "export HISTSIZE=0"],
    unset: ["history 10", "rm -f ~/notes.txt", "echo $HISTFILE"],
  },
};

describe("effect facts", () => {
  for (const [fact, { set, unset }] of Object.entries(CLASSES)) {
    it.each(set)(`${fact} is set by %s`, (command) => {
      expect(factsOf(command)[fact]).toBe(true);
    });
    it.each(unset)(`${fact} is not set by %s`, (command) => {
      expect(factsOf(command)[fact]).toBe(false);
    });
  }
});

describe("globs and find name the sensitive places they reach", () => {
  it.each([
    ["/home/u/.s*/id_*", "ssh"],
    ["/home/u/.[a]ws/*", "aws"],
    ["/etc/sh?dow", "shadow"],
    ["/home/u/project/.e?v", "env-file"],
    ["/home/u/.*", "ssh"],
  ])("%s is labelled %s", (glob, label) => {
    expect(pathFacts(glob).sensitive).toContain(label);
  });

  it.each(["/home/u/project/src/*.ts", "/home/u/project/*", "/tmp/*.log", "/home/u/.ssh/*.pub"])(
    "%s reaches no credential",
    (glob) => {
      expect(pathFacts(glob).credentials).toBe(false);
    },
  );

  it("find -name reaches the keys under any root, system files only under theirs", () => {
    expect(findPathFacts("/home/u", "id_*").credentials).toBe(true);
    expect(findPathFacts("/", "shadow").credentials).toBe(true);
    expect(findPathFacts("/home/u/project", "shadow").credentials).toBe(false);
    expect(findPathFacts("/home/u/project", "*.ts").credentials).toBe(false);
  });

  it("a find whose files are only listed names none; one that hands them on does", () => {
    expect(factsOf("find ~ -name 'id_*'").path.credential).toBe(false);
    expect(factsOf("find ~ -name 'id_*' -exec cat {} +").path.credential).toBe(true);
    expect(factsOf("find ~ -iname 'ID_*' | xargs cat").path.credential).toBe(true);
  });

  it("templates, known_hosts and public keys are not credentials; a test names without reading", () => {
    for (const path of [
      "/p/.env.example",
      "/p/.env.sample",
      "/h/.ssh/known_hosts",
      "/h/.ssh/id_rsa.pub",
    ])
      expect(pathFacts(path).credentials, path).toBe(false);
    for (const path of ["/p/.env", "/p/.env.example.local", "/p/.env.production", "/h/.ssh/id_rsa"])
      expect(pathFacts(path).credentials, path).toBe(true);
    expect(factsOf("[ -f .env ] && echo yes").path.credential).toBe(false);
    expect(factsOf("[ -f .env ] && cat .env").path.credential).toBe(true);
  });
});

describe("spellings found by reading the rules as an attacker", () => {
  it.each([
    ["privilegedContainer", "docker run -v=/:/h alpine"],
    ["privilegedContainer", "docker run -itv /:/h alpine sh"],
    ["privilegedContainer", "docker run -v /home/u/.ssh:/k alpine"],
    ["readsSecretStore", "gpg --export-secret-keys=ABC"],
    ["readsSecretStore", "gpg --export-secret-k ABC"],
    ["installsPersistence", "git -c core.fsmonitor='sh -c id' status"],
    ["destroysInfrastructure", "psql -c 'DROP/**/DATABASE prod'"],
    ["destroysInfrastructure", "mysql -e 'drop /* x */ table users'"],
  ])("%s is set by %s", (fact, command) => {
    expect(factsOf(command)[fact]).toBe(true);
  });

  it("a find inside $(…) or `…` hands its files on", () => {
    expect(factsOf('cat $(find ~ -name "id_*")').path.credential).toBe(true);
    expect(factsOf('tar cf k.tar `find ~ -name "id_*"`').path.credential).toBe(true);
  });

  it("a deleting tool's verb may be glued to the rest of its name", () => {
    for (const toolName of ["mcp__fs__deletedirectory", "forceRemovePath", "mcp__x__rmdir"]) {
      const call = computeCallFacts("before_tool_call", { toolName, params: { path: "/" } });
      expect((cedarFacts(call.tools[0]!) as Facts).toolDeletesSystemPath, toolName).toBe(true);
    }
    const call = computeCallFacts("before_tool_call", {
      toolName: "mcp__fs__delete_file",
      params: { path: "/home/dev/project/tmp.txt" },
    });
    expect((cedarFacts(call.tools[0]!) as Facts).toolDeletesSystemPath).toBe(false);
  });
});

describe("hostile globs", () => {
  it("a bracket the regular-expression engine refuses matches any name instead of throwing", () => {
    expect(pathFacts("/home/u/.s[z-a]h/id_*").credentials).toBe(true);
    expect(() => findPathFacts("/home/u", "[z-a]*")).not.toThrow();
  });
});

describe("internal network", () => {
  it("reads the port of each command of the program, not only the first", () => {
    expect(
      factsOf("curl localhost:3000/ && curl localhost:2375/containers/json").reachesInternal,
    ).toBe(true);
    expect(factsOf("curl http://0.0.0.0:2375/info").reachesInternal).toBe(true);
  });
});
