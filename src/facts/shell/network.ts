/**
 * Network programs, the hosts they contact and whether they send data out. Each tool's option
 * grammar is described here (which options take a value, which upload), so the URL of
 * `curl -H 'X: y' -d @notes.txt https://paste.example/` is found and the value of `-H` is not.
 */
import type { NetworkFact } from "./schema.js";

interface Invocation {
  program: string;
  args: readonly string[];
  /** Its standard input is fed (pipe, `<`, here-document): what it reads may go out. */
  hasInput: boolean;
}

/** A shell expansion: `$(…)` (nested once), `${…}`, `` `…` `` or `$NAME`. */
const EXPANSION = /\$\((?:[^()]|\([^()]*\))*\)|\$\{[^}]*\}|`[^`]*`|\$[A-Za-z_][A-Za-z0-9_]*/gu;
/** What stands for an expansion in a host: data chosen when the command runs. */
export const DYNAMIC_LABEL = "$(…)";

/**
 * The host of a target whose host part is built when the command runs (`$(cat .env).evil.example`,
 * DNS exfiltration): each expansion becomes `$(…)`, so the domain it goes to stays visible and
 * the host is never dropped (a rule reads `$(…)` as not static, never as harmless).
 */
function dynamicHost(text: string): string | undefined {
  const collapsed = text.replace(EXPANSION, DYNAMIC_LABEL);
  if (!collapsed.includes(DYNAMIC_LABEL)) return undefined;
  const host = collapsed
    .replace(/^[a-z][a-z0-9+.-]*:\/\//iu, "")
    .replace(/[/?#].*$/su, "")
    .replace(/^.*@/su, "")
    .replace(/:\d*$/u, "")
    .toLowerCase();
  return host === "" ? undefined : host;
}

/** Lower-case host of a URL or `[user@]host[:port]`, or undefined when the text names none. */
export function hostOf(target: string): string | undefined {
  const text = target.trim();
  // A path (`/var/run/docker.sock`, `./out`, `~/x`) is no host.
  if (text === "" || /^[-/.~]/u.test(text)) return undefined;
  const dynamic = dynamicHost(text);
  if (dynamic !== undefined) return dynamic;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//iu.test(text) ? text : `http://${text}`);
    const host = url.hostname.toLowerCase();
    return host === "" ? undefined : host.replace(/^\[(.*)\]$/u, "$1");
  } catch {
    return undefined;
  }
}

interface Parsed {
  operands: string[];
  values: Map<string, string[]>;
}

/**
 * Options with a value, short and long, for one tool: the rest are flags or operands. With
 * `stopAtOperand` (ssh), everything from the first operand on is an operand: `ssh host rm -rf /`.
 */
function parseOptions(
  args: readonly string[],
  valued: ReadonlySet<string>,
  stopAtOperand = false,
): Parsed {
  const operands: string[] = [];
  const values = new Map<string, string[]>();
  const put = (name: string, value: string): void => {
    values.set(name, [...(values.get(name) ?? []), value]);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (stopAtOperand && operands.length > 0) operands.push(arg);
    else if (arg.startsWith("--") && arg.length > 2) {
      const [name = "", value] = arg.slice(2).split("=", 2);
      if (value !== undefined) put(name, value);
      else if (valued.has(name)) put(name, args[++i] ?? "");
      else put(name, "");
    } else if (arg.startsWith("-") && arg.length > 1) {
      for (let k = 1; k < arg.length; k++) {
        const letter = arg[k] ?? "";
        if (!valued.has(letter)) {
          put(letter, "");
          continue;
        }
        const attached = arg.slice(k + 1);
        put(letter, attached === "" ? (args[++i] ?? "") : attached);
        break;
      }
    } else operands.push(arg);
  }
  return { operands, values };
}

const CURL_VALUED = new Set([
  ..."AbcCdDeEFHKmoPQrTtuUwxXyYz",
  ...["data", "data-ascii", "data-binary", "data-raw", "data-urlencode", "form", "form-string"],
  ...["header", "output", "request", "user", "user-agent", "referer", "cookie", "cookie-jar"],
  ...["upload-file", "url", "proxy", "json", "max-time", "connect-timeout", "cert", "key"],
  ...["cacert", "write-out", "resolve", "connect-to", "retry", "config", "range", "variable"],
  ...["unix-socket", "abstract-unix-socket", "interface", "dns-servers", "doh-url", "noproxy"],
  ...["proxy-user", "preproxy", "socks4", "socks4a", "socks5", "socks5-hostname", "max-redirs"],
  ...["dump-header", "trace", "trace-ascii", "stderr", "limit-rate", "max-filesize", "proto"],
  ...["url-query", "output-dir", "mail-from", "mail-rcpt", "oauth2-bearer", "aws-sigv4"],
]);
const CURL_UPLOAD = ["d", "F", "T", "data", "data-ascii", "data-binary", "data-raw"];
const CURL_UPLOAD_MORE = [
  ...["data-urlencode", "form", "form-string", "upload-file", "json", "url-query", "mail-rcpt"],
];

/**
 * A target that carries data chosen when the command runs: command output anywhere in it
 * (`?k=$(env | base64)`), or any expansion in its host (DNS exfiltration) or query string.
 */
const CURL_CARRIERS = [
  "H",
  "header",
  "A",
  "user-agent",
  "e",
  "referer",
  "b",
  "cookie",
  "u",
  "user",
];
const WGET_CARRIERS = ["header", "U", "user-agent", "referer", "user", "password"];

function sendsInOptions(values: ReadonlyMap<string, string[]>, names: readonly string[]): boolean {
  return names.some((name) => (values.get(name) ?? []).some((v) => /\$\(|`/u.test(v)));
}

function carriesData(target: string): boolean {
  if (/\$\(|`/u.test(target)) return true;
  if (hostOf(target)?.includes(DYNAMIC_LABEL) === true) return true;
  const query = target.indexOf("?");
  return query !== -1 && target.slice(query).includes("$");
}

function curl({ args, hasInput }: Invocation): NetworkFact {
  const { operands, values } = parseOptions(args, CURL_VALUED);
  const sent = [...CURL_UPLOAD, ...CURL_UPLOAD_MORE].flatMap((name) => values.get(name) ?? []);
  const method = [...(values.get("X") ?? []), ...(values.get("request") ?? [])].join(" ");
  const files = sent.flatMap((value) => {
    const file = /(?:^|=)[@<](.+)$/u.exec(value)?.[1];
    return file === undefined ? [] : [file === "-" ? "(stdin)" : file];
  });
  for (const name of ["T", "upload-file"]) files.push(...(values.get(name) ?? []));
  const targets = [...operands, ...(values.get("url") ?? [])];
  return {
    program: "curl",
    hosts: hostsOf(targets),
    // A header, agent, referer, cookie or user holding command output sends it too.
    upload:
      sent.length > 0 ||
      /POST|PUT|PATCH/iu.test(method) ||
      (hasInput && files.length > 0) ||
      targets.some(carriesData) ||
      sendsInOptions(values, CURL_CARRIERS),
    uploadFiles: [...new Set(files)],
  };
}

const WGET_VALUED = new Set([
  ..."OoaeitTwPUQ",
  ...["output-document", "post-data", "post-file", "body-data", "body-file", "method", "header"],
  ...["user", "password", "user-agent", "input-file", "directory-prefix", "tries", "timeout"],
]);

function wget({ args }: Invocation): NetworkFact {
  const { operands, values } = parseOptions(args, WGET_VALUED);
  const files = [...(values.get("post-file") ?? []), ...(values.get("body-file") ?? [])];
  const data = ["post-data", "body-data"].some((name) => values.has(name));
  const method = (values.get("method") ?? []).join(" ");
  return {
    program: "wget",
    hosts: hostsOf(operands),
    upload:
      data ||
      files.length > 0 ||
      /POST|PUT|PATCH/iu.test(method) ||
      operands.some(carriesData) ||
      sendsInOptions(values, WGET_CARRIERS),
    uploadFiles: files,
  };
}

const SSH_VALUED = new Set([..."bcDEeFIiJLlmOopQRSWwB"]);

/** `ssh [opts] [user@]host [command]`: the host, the jump hosts, and input sent along. */
function ssh({ program, args, hasInput }: Invocation): NetworkFact {
  const { operands, values } = parseOptions(args, SSH_VALUED, true);
  const jumps = (values.get("J") ?? []).flatMap((j) => j.split(","));
  return {
    program,
    hosts: hostsOf([...operands.slice(0, 1), ...jumps]),
    upload: hasInput || values.has("R"),
    uploadFiles: [],
  };
}

/** The command `ssh [opts] host command…` runs on the host, as the remote shell will parse it. */
export function sshRemoteCommand(args: readonly string[]): string | undefined {
  const { operands } = parseOptions(args, SSH_VALUED, true);
  return operands.length > 1 ? operands.slice(1).join(" ") : undefined;
}

const REMOTE = /^(?:(?:scp|sftp|rsync|ssh):\/\/|(?:[^@/:\s]+@)?\[?[A-Za-z0-9._:-]+?\]?::?)/u;

/**
 * `scp`/`rsync`: operands with a host part are remote; local sources before a remote end upload.
 * A copy between local paths (`rsync -av src/ backup/`) is no network; one whose operand is
 * built at run time (`rsync -a . $DEST`) may be.
 */
function copy({ program, args }: Invocation): NetworkFact | undefined {
  const valued = new Set([..."cFiJloPSe", "rsh", "exclude", "include", "filter", "port"]);
  const { operands } = parseOptions(args, valued);
  const remote = (op: string): boolean =>
    (REMOTE.test(op) && !op.startsWith("/")) || /[$`]/u.test(op);
  if (!operands.some(remote)) return undefined;
  const hosts = operands.filter(remote).flatMap((op) => {
    const host = hostOf(op.replace(/^(?:[a-z]+:\/\/)?(?:[^@/]+@)?([^:/]+).*$/u, "$1"));
    return host === undefined ? [] : [host];
  });
  const last = operands.at(-1);
  const sources = operands.slice(0, -1).filter((op) => !remote(op));
  const upload = last !== undefined && remote(last) && sources.length > 0;
  return { program, hosts: [...new Set(hosts)], upload, uploadFiles: upload ? sources : [] };
}

const GIT_NETWORK = new Set(["push", "fetch", "pull", "clone", "ls-remote", "send-email"]);
const GIT_GLOBAL_VALUED = new Set(["C", "c", "git-dir", "work-tree", "namespace"]);

function git({ args }: Invocation): NetworkFact | undefined {
  const { operands } = parseOptions(args, GIT_GLOBAL_VALUED);
  const sub = operands[0];
  if (sub === "remote" && ["add", "set-url"].includes(operands[1] ?? "")) {
    // The remote a later `git push NAME` goes to: its host is contacted by this command's pushes.
    return {
      program: "git remote",
      hosts: gitHosts(operands.slice(3)),
      upload: false,
      uploadFiles: [],
    };
  }
  if (sub === undefined || !GIT_NETWORK.has(sub)) return undefined;
  const upload = sub === "push" || sub === "send-email";
  return { program: `git ${sub}`, hosts: gitHosts(operands.slice(1)), upload, uploadFiles: [] };
}

/** Hosts of the operands that are git URLs (`https://…`, `ssh://…`, `user@host:path`). */
function gitHosts(operands: readonly string[]): string[] {
  const urls = operands.filter((op) => /^[a-z+]+:\/\/|^[^@\s/]+@[^:\s]+:/iu.test(op));
  return urls.flatMap((url) => {
    const host = hostOf(url.replace(/^([^@\s/]+@)?([^:/\s]+):(?!\/\/)/u, "ssh://$1$2/"));
    return host === undefined ? [] : [host];
  });
}

/** nc, ncat, telnet, ftp, dig…: hosts are operands that are not ports or DNS record types. */
function plain(valued: string, skipWords: RegExp) {
  const set = new Set([...valued]);
  return ({ program, args, hasInput }: Invocation): NetworkFact => {
    const { operands, values } = parseOptions(args, set);
    const named = operands.map((op) => op.replace(/^@/u, "")).filter((op) => !skipWords.test(op));
    const listens = values.has("l");
    return {
      program,
      hosts: hostsOf(named.slice(0, program === "dig" ? undefined : 1)),
      upload:
        (hasInput && !listens && /^(?:nc|ncat|netcat|socat|telnet)$/u.test(program)) ||
        named.some(carriesData),
      uploadFiles: [],
    };
  };
}

const PORT_OR_TYPE = /^(?:\d+(?:-\d+)?|[A-Z]{1,6}|\+.*)$/u;

const NETWORK_PROGRAMS: Readonly<Record<string, (i: Invocation) => NetworkFact | undefined>> = {
  curl,
  wget,
  ssh,
  sftp: ssh,
  scp: copy,
  rsync: copy,
  git,
  nc: plain("pswecxXiqWIOT", PORT_OR_TYPE),
  ncat: plain("pswecxXiqWIOT", PORT_OR_TYPE),
  netcat: plain("pswecxXiqWIOT", PORT_OR_TYPE),
  telnet: plain("lnbe", PORT_OR_TYPE),
  ftp: plain("P", PORT_OR_TYPE),
  tftp: plain("", PORT_OR_TYPE),
  dig: plain("bcfkpqtxy", PORT_OR_TYPE),
  nslookup: plain("", PORT_OR_TYPE),
  host: plain("cNRtW", PORT_OR_TYPE),
  whois: plain("hp", PORT_OR_TYPE),
  ping: plain("cisWwt", PORT_OR_TYPE),
  traceroute: plain("fmpqwz", PORT_OR_TYPE),
};

function hostsOf(targets: readonly string[]): string[] {
  const hosts = targets.flatMap((t) => {
    const host = hostOf(t);
    return host === undefined ? [] : [host];
  });
  return [...new Set(hosts)];
}

/** `openssl s_client -connect host:port`: a TLS connection, sending what it reads. */
function openssl({ args, hasInput }: Invocation): NetworkFact | undefined {
  if (args[0] !== "s_client") return undefined;
  const { operands, values } = parseOptions(args.slice(1), new Set(["connect", "host", "port"]));
  const targets = [...(values.get("connect") ?? []), ...(values.get("host") ?? []), ...operands];
  return {
    program: "openssl s_client",
    hosts: hostsOf(targets),
    upload: hasInput,
    uploadFiles: [],
  };
}

const DEV_NET = /^\/dev\/(tcp|udp)\/([^/]+)\/[^/]+$/u;

/**
 * bash's network redirections: `> /dev/tcp/host/port` sends, `< /dev/tcp/…` receives, and a
 * shell with its input or output there is a reverse shell.
 */
export function redirectNetworkFact(target: string, mode: string): NetworkFact | undefined {
  const match = DEV_NET.exec(target);
  if (match === null) return undefined;
  const host = hostOf(match[2] ?? "");
  return {
    program: `/dev/${match[1] ?? "tcp"}`,
    hosts: host === undefined ? [] : [host],
    upload: mode !== "read",
    uploadFiles: [],
  };
}

/** The network fact of one command, or undefined when it is not a network program. */
export function networkFact(invocation: Invocation): NetworkFact | undefined {
  if (invocation.program === "openssl") return openssl(invocation);
  if (invocation.program === "socat") {
    const hosts = invocation.args.flatMap((a) => {
      const host = /^(?:tcp|udp|ssl|openssl)[46]?(?:-connect)?:([^:,]+)/iu.exec(a)?.[1];
      return host === undefined ? [] : [host.toLowerCase()];
    });
    return { program: "socat", hosts, upload: hosts.length > 0, uploadFiles: [] };
  }
  return NETWORK_PROGRAMS[invocation.program]?.(invocation);
}
