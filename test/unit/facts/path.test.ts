/**
 * Path facts: one file under every spelling (`~`, $HOME, `..`, `//`, case, `file://`), inside or
 * outside the project, and sensitive places by family.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { pathFacts, PathFactSchema, type SensitiveLabel } from "../../../src/facts/index.js";

const options = { home: "/home/dev", projectRoot: "/home/dev/project" };

describe("normalising a path", () => {
  it("reads one file under every spelling", () => {
    for (const spelling of [
      "~/.ssh/id_rsa",
      "$HOME/.ssh/id_rsa",
      "${HOME}/.ssh/id_rsa",
      "/home/dev/project/../.ssh//id_rsa",
      "../.ssh/./id_rsa",
      "/home/dev/.ssh/id_rsa/",
      "file:///home/dev/.ssh/id_rsa",
      "file://localhost/home/dev/%2essh/id_rsa",
    ])
      expect(pathFacts(spelling, options).normalized, spelling).toBe("/home/dev/.ssh/id_rsa");
  });

  it("never climbs above the root", () => {
    expect(pathFacts("/../../../etc/passwd").normalized).toBe("/etc/passwd");
    expect(pathFacts("../../../../../../etc/passwd", options).normalized).toBe("/etc/passwd");
  });

  it("is idempotent: a normalised path normalises to itself", () => {
    const segment = fc.constantFrom("a", "b", ".", "..", "", "~", ".ssh", "$HOME");
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), fc.boolean(), (segments, rooted) => {
        const path = (rooted ? "/" : "") + segments.join("/");
        const once = pathFacts(path, options);
        if (once.unparsed !== undefined) return;
        const twice = pathFacts(once.normalized, options);
        expect(twice.normalized).toBe(once.normalized);
        expect(twice.sensitive).toEqual(once.sensitive);
      }),
    );
  });

  it("takes /, a home or a system directory for no project's root: nothing is inside it", () => {
    for (const projectRoot of ["/", "/etc", "/root/x", "/home/dev", "/Users/dev", "/usr"]) {
      for (const path of ["/etc/passwd", "/home/dev/.ssh/id_rsa", "/usr/bin/ls"])
        expect(pathFacts(path, { projectRoot }).insideProject, `${projectRoot} ${path}`).toBe(
          false,
        );
    }
    expect(
      pathFacts("/var/lib/ci/x", { home: "/var/lib/ci", projectRoot: "/var/lib" }),
    ).toMatchObject({ insideProject: false });
    expect(pathFacts("/srv/app/x", { projectRoot: "/srv/app" }).insideProject).toBe(true);
  });

  it("says inside or outside the project only when it knows the root", () => {
    expect(pathFacts("src/index.ts", options).insideProject).toBe(true);
    expect(pathFacts("./dist", options).insideProject).toBe(true);
    expect(pathFacts("../other/x", options).insideProject).toBe(false);
    expect(pathFacts("/home/dev/project-evil/x", options).insideProject).toBe(false);
    expect(pathFacts("/tmp/x", options).insideProject).toBe(false);
    expect(pathFacts("src/index.ts").insideProject).toBeUndefined();
    // The cwd the call names is where a relative path starts.
    expect(pathFacts("x", { ...options, cwd: "/tmp" }).normalized).toBe("/tmp/x");
  });

  it("marks what it could not expand", () => {
    expect(pathFacts("$XDG_CONFIG_HOME/gcloud", options).unresolved).toBe(true);
    expect(pathFacts("`pwd`/x", options).unresolved).toBe(true);
    expect(pathFacts("~root/.bashrc", options).normalized).toBe("/root/.bashrc");
    expect(pathFacts("", options).unparsed).toBe("empty");
    expect(pathFacts("a/".repeat(3000), options).unparsed).toBe("too-long");
  });
});

describe("sensitive places", () => {
  it.each<[string, SensitiveLabel]>([
    ["~/.ssh/id_ed25519", "ssh"],
    ["~/.SSH/ID_RSA", "private-key"],
    ["/root/.ssh/authorized_keys", "authorized-keys"],
    ["/var/lib/jenkins/.ssh/config", "ssh"],
    ["~/.aws/credentials", "aws"],
    ["/Users/me/.config/gcloud/application_default_credentials.json", "gcloud"],
    ["~/.azure/accessTokens.json", "azure"],
    ["~/.kube/config", "kube-config"],
    ["~/.docker/config.json", "docker-config"],
    ["~/.config/gh/hosts.yml", "gh"],
    ["~/.netrc", "netrc"],
    ["~/.npmrc", "npmrc"],
    ["project/.pypirc", "pypirc"],
    ["~/.git-credentials", "git-credentials"],
    [".env", "env-file"],
    ["app/.env.production.local", "env-file"],
    [".envrc", "env-file"],
    ["~/Library/Keychains/login.keychain-db", "keychain"],
    ["~/.gnupg/private-keys-v1.d/x.key", "gnupg"],
    ["~/.bashrc", "shell-startup"],
    ["~/.zshenv", "shell-startup"],
    ["~/.config/fish/config.fish", "shell-startup"],
    ["/etc/profile.d/evil.sh", "shell-startup"],
    ["/etc/crontab", "crontab"],
    ["/etc/cron.d/job", "crontab"],
    ["/var/spool/cron/crontabs/root", "crontab"],
    ["/etc/systemd/system/evil.service", "systemd-unit"],
    ["~/.config/systemd/user/evil.service", "systemd-unit"],
    ["~/Library/LaunchAgents/x.plist", "launchd"],
    ["/etc/sudoers", "sudoers"],
    ["/etc/sudoers.d/90-agent", "sudoers"],
    ["/etc/passwd", "passwd"],
    ["/etc/shadow", "shadow"],
    ["/etc/shadow-", "shadow"],
    [".git/hooks/pre-commit", "git-hooks"],
    [".github/workflows/ci.yml", "ci-workflow"],
    ["/proc/self/environ", "process-environment"],
    ["/usr/local/bin/node", "system"],
  ])("%s is %s", (path, label) => {
    const facts = pathFacts(path, options);
    expect(facts.sensitive).toContain(label);
    expect(facts.credentials || facts.persistence || label === "system").toBe(true);
    expect(PathFactSchema.parse(facts)).toEqual(facts);
  });

  it("reaches a sensitive place through NUL, Windows spellings and /proc links", () => {
    expect(pathFacts("~/.ssh/id_rsa\0.txt", options).sensitive).toContain("private-key");
    expect(pathFacts("C:\\Users\\me\\.ssh\\id_rsa", options).sensitive).toContain("ssh");
    expect(pathFacts("/proc/self/root/etc/shadow", options).sensitive).toContain("shadow");
    expect(pathFacts("/proc/1/cwd/.env", options).sensitive).toContain("env-file");
    expect(pathFacts("%USERPROFILE%\\.aws\\credentials", options)).toMatchObject({
      unresolved: true,
      sensitive: ["aws"],
    });
    expect(pathFacts("~/.ss*/id_*", options).glob).toBe(true);
  });

  it("reaches a sensitive place through any climb", () => {
    expect(pathFacts("../../../../etc/shadow").sensitive).toContain("shadow");
    expect(pathFacts("/home/dev/project/../../dev/.aws/credentials").sensitive).toContain("aws");
  });

  it("does not flag everyday project files", () => {
    for (const path of [
      "src/environment.ts",
      "README.md",
      "docs/ssh.md",
      "test/env.test.ts",
      "package.json",
      ".gitignore",
      "dist/index.js",
      "scripts/profile.ts",
    ])
      expect(pathFacts(path, options).sensitive, path).toEqual([]);
  });
});

describe("properties of sensitivity", () => {
  it("no spelling of a sensitive path (case, `./`, `//`, a climb back) loses its labels", () => {
    const sensitive = fc.constantFrom(
      "~/.ssh/id_rsa",
      "~/.aws/credentials",
      "/etc/shadow",
      "~/.bashrc",
      "/etc/sudoers.d/x",
      "project/.env.local",
    );
    const noise = fc.constantFrom("./", "/", "x/../", "");
    fc.assert(
      fc.property(
        sensitive,
        fc.array(noise, { maxLength: 4 }),
        fc.boolean(),
        (path, extra, upper) => {
          const expected = pathFacts(path, options).sensitive;
          const segments = path.split("/");
          const spelled = segments.map((s, i) =>
            i === 0 || s === "~" ? s : `${extra[i % (extra.length || 1)] ?? ""}${s}`,
          );
          const text = upper
            ? spelled.join("/").toUpperCase().replace(/^~/, "~")
            : spelled.join("/");
          expect(pathFacts(text, options).sensitive).toEqual(expected);
        },
      ),
    );
  });
});
