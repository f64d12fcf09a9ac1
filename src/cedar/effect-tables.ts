/**
 * Curated tables behind the effect facts of shell-effects.ts: which program and subcommand
 * destroys shared infrastructure, reads a secret store, installs something that runs later, and
 * which local ports are control planes. Each entry says where it comes from (the tool's own
 * manual); add a row rather than a rule. Matching is on the parsed command (program by basename,
 * operands after quoting), so spelling (quotes, wrappers, `sudo`, `sh -c`) does not matter.
 */

/** `program` then a sequence of operands: every operand in `words` must appear in order. */
export interface CommandPattern {
  program: string;
  /** Operands that must appear, in this order (not necessarily adjacent); case-blind. */
  words: readonly string[];
  /** Or: any operand matching this (case-blind), such as an AWS `delete-*` action. */
  operand?: RegExp;
  /** Or: any argument (flag or operand) matching this. */
  arg?: RegExp;
}

/**
 * Commands that destroy shared infrastructure: clusters, cloud resources, buckets, databases.
 * From each CLI's reference: kubectl(1) delete/drain, helm uninstall, terraform/OpenTofu/
 * Terragrunt/Pulumi/CDK destroy, serverless remove, aws-cli `s3 rm|rb` and every `delete-*` /
 * `terminate-*` action, gcloud/az/doctl `… delete`, gsutil rm/rb, heroku `apps:destroy`,
 * `pg:reset`, PostgreSQL's dropdb, redis-cli FLUSHALL/FLUSHDB, mongosh `dropDatabase`.
 * SQL through a client (`psql -c`, `mysql -e`, `sqlite3 db "…"`) is in DESTRUCTIVE_SQL.
 */
export const DESTROYS_INFRASTRUCTURE: readonly CommandPattern[] = [
  { program: "kubectl", words: ["delete"] },
  { program: "kubectl", words: ["drain"] },
  { program: "oc", words: ["delete"] },
  { program: "helm", words: ["uninstall"] },
  { program: "helm", words: ["delete"] },
  { program: "terraform", words: ["destroy"] },
  { program: "terraform", words: ["apply"], arg: /^-destroy$/i },
  { program: "tofu", words: ["destroy"] },
  { program: "terragrunt", words: ["destroy"] },
  { program: "terragrunt", words: ["run-all", "destroy"] },
  { program: "pulumi", words: ["destroy"] },
  { program: "cdk", words: ["destroy"] },
  { program: "serverless", words: ["remove"] },
  { program: "sls", words: ["remove"] },
  { program: "aws", words: ["s3", "rm"] },
  { program: "aws", words: ["s3", "rb"] },
  { program: "aws", words: [], operand: /^(delete|terminate|purge|remove)-/i },
  { program: "gcloud", words: ["delete"] },
  { program: "gsutil", words: ["rm"] },
  { program: "gsutil", words: ["rb"] },
  { program: "az", words: ["delete"] },
  { program: "doctl", words: ["delete"] },
  { program: "heroku", words: [], operand: /^(apps:destroy|pg:reset|addons:destroy)$/i },
  { program: "dropdb", words: [] },
  { program: "redis-cli", words: [], operand: /^flush(all|db)$/i },
  { program: "mongo", words: [], arg: /dropDatabase|\.drop\(/i },
  { program: "mongosh", words: [], arg: /dropDatabase|\.drop\(/i },
];

/** Database clients whose arguments (or piped input) may carry SQL. */
export const SQL_CLIENTS: ReadonlySet<string> = new Set([
  "psql",
  "mysql",
  "mariadb",
  "sqlite3",
  "sqlcmd",
  "cockroach",
  "clickhouse-client",
  "duckdb",
  "snowsql",
  "bq",
]);

/**
 * SQL that destroys data wholesale: DROP DATABASE/SCHEMA/TABLE, TRUNCATE, DELETE without WHERE;
 * an SQL block comment between the words separates them as a blank does.
 */
export const DESTRUCTIVE_SQL =
  /\b(drop(\s|\/\*[\s\S]*?\*\/)+(database|schema|table|keyspace)|truncate(\s|\/\*[\s\S]*?\*\/)+(table\s+)?[\w".`]+|delete(\s|\/\*[\s\S]*?\*\/)+from\s+[\w".`]+\s*(;|$))/i;

/**
 * Reading a secret store's secrets: macOS security(1) find-*-password/dump-keychain/export,
 * GnuPG's --export-secret-keys/-subkeys, libsecret's secret-tool lookup, pass(1) show,
 * 1Password's `op read`, keyctl(1) print/read/pipe, and the clouds' secret managers.
 */
export const READS_SECRET_STORE: readonly CommandPattern[] = [
  {
    program: "security",
    words: [],
    operand: /^(find-(generic|internet)-password|dump-keychain|export)$/i,
  },
  // GnuPG takes unambiguous abbreviations of long options, so a prefix is matched.
  { program: "gpg", words: [], arg: /^--export-secret/i },
  { program: "gpg2", words: [], arg: /^--export-secret/i },
  { program: "secret-tool", words: [], operand: /^(lookup|search)$/i },
  { program: "pass", words: ["show"] },
  { program: "op", words: ["read"] },
  { program: "keyctl", words: [], operand: /^(print|read|pipe)$/i },
  { program: "aws", words: ["secretsmanager", "get-secret-value"] },
  { program: "gcloud", words: ["secrets", "versions", "access"] },
  { program: "az", words: ["keyvault", "secret", "show"] },
];

/**
 * Installing something that runs later, without writing a file hookbus sees: launchctl(1)
 * load/bootstrap/submit/enable, systemctl enable/link, at(1), git config keys that make git run
 * a program (core.hooksPath, core.fsmonitor, core.sshCommand, core.pager, core.editor,
 * core.askPass, credential.helper: git-config(1)), macOS login hooks, Windows schtasks and the
 * Run registry keys.
 */
export const INSTALLS_PERSISTENCE: readonly CommandPattern[] = [
  { program: "launchctl", words: [], operand: /^(load|bootstrap|submit|enable)$/i },
  { program: "systemctl", words: [], operand: /^(enable|link|reenable)$/i },
  { program: "at", words: [] },
  { program: "batch", words: [] },
  {
    program: "git",
    words: ["config"],
    operand: /^(core\.(hookspath|fsmonitor|sshcommand|pager|editor|askpass)|credential\.helper)$/i,
  },
  // `git -c core.fsmonitor=… status`: a one-shot setting runs the program the same way.
  {
    program: "git",
    words: [],
    arg: /^(core\.(hookspath|fsmonitor|sshcommand|pager|editor|askpass)|credential\.helper)=/i,
  },
  { program: "defaults", words: ["write"], operand: /^(LoginHook|LogoutHook)$/i },
  { program: "schtasks", words: [], arg: /^\/create$/i },
  { program: "reg", words: ["add"], arg: /\\currentversion\\run/i },
];

/**
 * Local ports of control planes and data stores, which a request on loopback reaches with the
 * machine's own trust: Docker API 2375/2376, etcd 2379/2380, Kubernetes API 6443, kubectl proxy
 * 8001, kubelet 10250/10255, Consul 8500, Vault 8200, Nomad 4646, Redis 6379, Elasticsearch
 * 9200, CouchDB 5984, MongoDB 27017, memcached 11211, RabbitMQ management 15672, Caddy admin
 * 2019, supervisord 9001 (their default ports).
 */
export const CONTROL_PORTS: ReadonlySet<number> = new Set([
  2375, 2376, 2379, 2380, 6443, 8001, 10250, 10255, 8500, 8200, 4646, 6379, 9200, 5984, 27017,
  11211, 15672, 2019, 9001,
]);

/** Shell history files and logs whose removal hides what ran (bash, zsh, sh, fish, REPLs). */
export const TRACE_FILES =
  /(^|\/)(\.(bash|zsh|sh|ksh)_history|\.history|\.zhistory|fish_history|\.python_history|\.node_repl_history|\.psql_history|\.mysql_history|\.lesshst|wtmp|btmp|lastlog|utmp)$|^\/var\/log(\/|$)/i;

/** Commands that erase logs or history: journalctl --vacuum-*, wevtutil cl, auditctl -D, dmesg -c. */
export const ERASES_TRACES: readonly CommandPattern[] = [
  { program: "history", words: [], arg: /^-[a-z]*[cd]/i },
  { program: "set", words: ["+o", "history"] },
  { program: "journalctl", words: [], arg: /^--(vacuum-(size|time|files)|rotate)/i },
  { program: "wevtutil", words: [], operand: /^(cl|clear-log)$/i },
  { program: "auditctl", words: [], arg: /^-D$/ },
  { program: "dmesg", words: [], arg: /^(-[a-z]*[cC]|--(read-)?clear)$/ },
];

/**
 * Disk erasure by a device's own command, not a write hookbus sees: hdparm(8) ATA secure erase
 * and sector writes, nvme-cli format/sanitize, sg_format, macOS diskutil erase/zero/partition.
 */
export const ERASES_DEVICE: readonly CommandPattern[] = [
  {
    program: "hdparm",
    words: [],
    arg: /^--(security-erase(-enhanced)?|trim-sector-ranges|write-sector|make-bad-sector|dco-restore)/i,
  },
  { program: "nvme", words: [], operand: /^(format|sanitize)$/i },
  { program: "sg_format", words: [] },
  {
    program: "diskutil",
    words: [],
    operand: /^(erasedisk|erasevolume|zerodisk|randomdisk|secureerase|partitiondisk|reformat)$/i,
  },
];
