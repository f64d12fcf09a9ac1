/**
 * Interpreters: which programs run code, where that code comes from (a `-c`/`-e` one-liner, its
 * input, a file), the decode steps that often hide it (`base64 -d | sh`), and a scan of one-liners
 * for calls that delete, run commands or send data. The scan is best effort: it matches call
 * names, including aliased and `getattr` spellings, but code built from pieces at run time escapes
 * it. The policy library treats any interpreter fed from input as needing approval for that reason.
 */
import type { DangerousCall } from "./schema.js";
import { hostOf } from "./network.js";
import { decodeAnsiC } from "./words.js";
import { SHELLS } from "./wrappers.js";

export type Language =
  "shell" | "python" | "node" | "perl" | "ruby" | "php" | "awk" | "powershell" | "other";

type Scanned = Exclude<Language, "shell" | "other">;

const OTHER_INTERPRETERS = new Set(["lua", "tclsh", "Rscript", "osascript"]);

export function languageOf(program: string): Language | undefined {
  if (SHELLS.has(program)) return "shell";
  if (/^python[0-9.]*$/u.test(program) || program === "pypy" || program === "pypy3") {
    return "python";
  }
  if (program === "node" || program === "nodejs" || program === "bun" || program === "deno") {
    return "node";
  }
  if (program === "perl" || program === "ruby" || program === "php") return program;
  if (/^[gmn]?awk$/u.test(program)) return "awk";
  if (/^(?:pwsh|powershell)(?:\.exe)?$/iu.test(program)) return "powershell";
  return OTHER_INTERPRETERS.has(program) ? "other" : undefined;
}

/** The short option that carries a one-liner, per language. */
const CODE_OPTION: Record<Exclude<Scanned, "awk">, RegExp> = {
  python: /^-[A-Za-z]*c$/u,
  node: /^(?:-[A-Za-z]*[ep]|--eval|--print)$/u,
  perl: /^-[A-Za-z]*[eE]$/u,
  ruby: /^-[A-Za-z]*e$/u,
  php: /^-r$/u,
  powershell: /^-(?:c|command)$/iu,
};

/** PowerShell's `-EncodedCommand` (and its prefixes): base64 of UTF-16LE text. */
const ENCODED_COMMAND = /^-(?:e|ec|en|enc|enco|encod|encode|encoded|encodedcommand)$/iu;

export interface CodeSource {
  /** A one-liner given on the command line. */
  code?: string;
  /** It reads its program from standard input (no script operand, or `-`, or `sh -s`). */
  readsInput: boolean;
}

/** awk's program is its first operand, unless `-f` names a program file. */
function awkSource(args: readonly string[]): CodeSource {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg.startsWith("-f")) return { readsInput: false };
    if (arg === "-F" || arg === "-v") i += 1;
    else if (arg === "--") return { code: args[i + 1] ?? "", readsInput: false };
    else if (!arg.startsWith("-")) return { code: arg, readsInput: false };
  }
  return { readsInput: false };
}

/** Where an interpreter's program comes from, from its arguments (after its name). */
export function codeSource(language: Language, args: readonly string[]): CodeSource {
  if (language === "awk") return awkSource(args);
  const codeOption =
    language === "shell" || language === "other" ? undefined : CODE_OPTION[language];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (codeOption?.test(arg) === true) return { code: args[i + 1] ?? "", readsInput: false };
    if (language === "powershell" && ENCODED_COMMAND.test(arg)) {
      return {
        code: Buffer.from(args[i + 1] ?? "", "base64").toString("utf16le"),
        readsInput: false,
      };
    }
    if (language === "node" && arg.startsWith("--eval=")) {
      return { code: arg.slice(7), readsInput: false };
    }
    if (language === "python" && /^-[A-Za-z]*m$/u.test(arg)) return { readsInput: false };
    if (language === "shell" && /^-[A-Za-z]*s/u.test(arg)) return { readsInput: true };
    if (arg === "-") return { readsInput: true };
    if (!arg.startsWith("-")) return { readsInput: language === "node" && arg === "run" };
  }
  return { readsInput: true };
}

/** Decode steps: the program, and when it decodes given its arguments. */
export function decodeStep(program: string, args: readonly string[]): string | undefined {
  const has = (re: RegExp): boolean => args.some((a) => re.test(a));
  switch (program) {
    case "base64":
    case "base32":
    case "basenc":
      return has(/^-[A-Za-z]*[dD]|^--decode$/u) ? program : undefined;
    case "xxd":
      return has(/^-[A-Za-z]*r|^-revert$/u) ? "xxd" : undefined;
    case "openssl":
      return has(/^-d$|^-[A-Za-z]*d$|^base64$|^enc$/u) ? "openssl" : undefined;
    case "gzip":
    case "bzip2":
    case "xz":
    case "zstd":
      return has(/^-[A-Za-z]*d|^--decompress$/u) ? program : undefined;
    case "gunzip":
    case "zcat":
    case "bunzip2":
    case "bzcat":
    case "unxz":
    case "xzcat":
    case "unzstd":
    case "uudecode":
    case "rev":
    case "tr":
      return program;
    default:
      return undefined;
  }
}

interface CallPattern {
  call: string;
  pattern: RegExp;
}

/** Names matched as words anywhere in the code, so an alias or `getattr(m, "rmtree")` matches. */
const CALLS: Record<Scanned, CallPattern[]> = {
  awk: [
    { call: "system", pattern: /\bsystem\s*\(|\|\s*getline|\|\s*"/u },
    { call: "network", pattern: /\/inet\//u },
  ],
  python: [
    { call: "shutil.rmtree", pattern: /\brmtree\b/u },
    { call: "os.remove", pattern: /\b(?:remove|unlink|rmdir|removedirs)\b/u },
    { call: "os.system", pattern: /\b(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?)\b/u },
    { call: "subprocess", pattern: /\b(?:subprocess|Popen|check_output|check_call)\b/u },
    { call: "pty.spawn", pattern: /\bpty\b/u },
    { call: "network", pattern: /\b(?:urllib|urlopen|requests|httpx|http\.client|socket)\b/u },
    { call: "exec", pattern: /\b(?:exec|eval|compile|__import__)\s*\(/u },
    { call: "decode", pattern: /\b(?:b64decode|b32decode|fromhex|unhexlify|codecs\.decode)\b/u },
  ],
  node: [
    { call: "child_process", pattern: /\b(?:child_process|execSync|execFileSync|spawnSync)\b/u },
    { call: "fs.rm", pattern: /\b(?:rmSync|rmdirSync|unlinkSync|rm|rmdir|unlink|rimraf)\b/u },
    { call: "network", pattern: /\b(?:fetch|https?\.request|net\.connect|XMLHttpRequest)\b/u },
    // `eval` also as a value (`.then(eval)`, `[eval][0](…)`), and `new Function`.
    { call: "exec", pattern: /\beval\b|\bFunction\s*\(/u },
    { call: "decode", pattern: /\b(?:atob|base64)\b/u },
  ],
  perl: [
    { call: "system", pattern: /\b(?:system|exec|qx)\b|`/u },
    { call: "unlink", pattern: /\b(?:unlink|rmdir|rmtree|remove_tree)\b/u },
    { call: "network", pattern: /\b(?:IO::Socket|LWP|HTTP::Tiny|Net::)/u },
    { call: "exec", pattern: /\beval\b/u },
    { call: "decode", pattern: /\b(?:decode_base64|pack)\b/u },
  ],
  ruby: [
    { call: "system", pattern: /\b(?:system|exec|spawn|popen|%x)\b|`/u },
    { call: "FileUtils.rm_rf", pattern: /\b(?:rm_rf|rm_r|remove_dir|remove_entry|rmtree)\b/u },
    { call: "File.delete", pattern: /\b(?:delete|unlink)\b/u },
    { call: "network", pattern: /\b(?:Net::HTTP|TCPSocket|open-uri|URI\.open)\b/u },
    { call: "exec", pattern: /\beval\b/u },
    { call: "decode", pattern: /\b(?:decode64|unpack1?)\b/u },
  ],
  php: [
    { call: "system", pattern: /\b(?:system|exec|shell_exec|passthru|popen|proc_open)\b|`/u },
    { call: "unlink", pattern: /\b(?:unlink|rmdir)\b/u },
    { call: "network", pattern: /\b(?:curl_exec|fsockopen|file_get_contents\s*\(\s*['"]https?)/u },
    { call: "exec", pattern: /\b(?:eval|assert)\s*\(/u },
    { call: "decode", pattern: /\b(?:base64_decode|hex2bin|gzinflate)\b/u },
  ],
  // PowerShell names are case-insensitive, and every cmdlet has short aliases.
  powershell: [
    { call: "exec", pattern: /\b(?:iex|Invoke-Expression|Invoke-Command|icm)\b|&\s*\(/iu },
    { call: "system", pattern: /\b(?:Start-Process|saps|start|cmd(?:\.exe)?\s+\/c)\b/iu },
    {
      call: "network",
      pattern:
        /\b(?:iwr|irm|curl|wget|Invoke-WebRequest|Invoke-RestMethod|WebClient|DownloadString|DownloadFile|Net\.Sockets|TcpClient|Start-BitsTransfer)\b/iu,
    },
    { call: "Remove-Item", pattern: /\b(?:Remove-Item|rm|rmdir|del|erase|rd|ri)\b/iu },
    { call: "decode", pattern: /\b(?:FromBase64String|EncodedCommand)\b/iu },
  ],
};

/** Calls that delete a whole tree; their first string argument is the target when it is one. */
const RECURSIVE_DELETE =
  /\b(?:rmtree|rm_rf|rm_r|remove_tree|remove_dir|rimraf)\b|recursive\s*:\s*true|-Recurse\b/iu;

export interface CodeScan {
  calls: DangerousCall[];
  /** Shell command lines found in string literals passed to a run-a-command call. */
  scripts: string[];
  /** Deletions the code asks for: recursive or not, with literal targets when they are literal. */
  deletion?: { recursive: boolean; targets: string[] };
  /** Code that uses the network: the hosts of its literal URLs, and whether it sends data. */
  network?: { hosts: string[]; upload: boolean; uploadFiles: string[] };
}

/** A call or argument that sends a body: `requests.post`, `data=`, `method: 'POST'`, `sendall`. */
const SENDS =
  /\b(?:post|put|patch)\s*\(|\bdata\s*=|\bbody\s*:|\bjson\s*=|['"](?:POST|PUT|PATCH)['"]|\bsend(?:all|to)?\s*\(|-Method\s+(?:Post|Put)|\bUploadFile\b|-InFile\b/iu;

/** A URL anywhere in code, quoted or not (PowerShell's `iwr https://…` takes it bare). */
const URL_IN_CODE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`()<>{}|\\^]+/giu;

function networkOf(calls: readonly DangerousCall[], code: string) {
  if (!calls.some((c) => c.call === "network")) return undefined;
  const hosts = [...code.matchAll(URL_IN_CODE)].flatMap((m) => {
    const host = hostOf(m[0]);
    return host === undefined ? [] : [host];
  });
  // A socket's `("10.0.0.1", 4444)`: the address literal next to a port.
  for (const m of code.matchAll(/\(\s*['"]([A-Za-z0-9.-]+|\[?[0-9a-f:]+\]?)['"]\s*,\s*\d+\s*\)/giu))
    hosts.push((m[1] ?? "").toLowerCase());
  return { hosts: [...new Set(hosts)], upload: SENDS.test(code), uploadFiles: [] };
}

const STRING = /(['"])((?:\\.|(?!\1).)*)\1/gu;
const RUN_CALL =
  /\b(?:system|popen|execSync|exec|spawnSync|shell_exec|passthru|check_output|check_call|run|call|Popen|getoutput|getstatusoutput)\s*\(\s*(\[?)/gu;

function literalsAfter(code: string, from: number, list: boolean): string[] {
  const rest = code.slice(from, from + 2_048);
  const stop = list ? rest.indexOf("]") : rest.search(/[,)]/u);
  const span = stop === -1 ? rest : rest.slice(0, stop);
  return [...span.matchAll(STRING)].map((m) => decodeAnsiC(m[2] ?? ""));
}

function commandLines(code: string): string[] {
  const lines: string[] = [];
  for (const match of code.matchAll(RUN_CALL)) {
    const words = literalsAfter(code, match.index + match[0].length, match[1] === "[");
    if (words.length > 0) lines.push(match[1] === "[" ? words.join(" ") : (words[0] ?? ""));
  }
  for (const match of code.matchAll(/`([^`]+)`/gu)) lines.push(match[1] ?? "");
  return lines;
}

/** Scans one piece of interpreter code: best effort, see the module comment. */
export function scanCode(interpreter: string, language: Language, code: string): CodeScan {
  if (language === "shell" || language === "other") return { calls: [], scripts: [] };
  const calls = CALLS[language]
    .filter(({ pattern }) => pattern.test(code))
    .map(({ call }) => ({ interpreter, call }));
  const deletes = calls.some((c) => /rm|remove|unlink|delete|rmtree/iu.test(c.call));
  const scan: CodeScan = { calls, scripts: commandLines(code) };
  const network = networkOf(calls, code);
  if (network !== undefined) scan.network = network;
  if (deletes) {
    const targets = [...code.matchAll(STRING)]
      .map((m) => decodeAnsiC(m[2] ?? ""))
      .filter((s) => /^(?:[/~.]|[A-Za-z]:[\\/])/u.test(s));
    scan.deletion = { recursive: RECURSIVE_DELETE.test(code), targets };
  }
  return scan;
}
