/** Text with secrets of every kind the edge redacts, inside random prose. */
import fc from "fast-check";

const chars = (alphabet: string, min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength: min, maxLength: max });

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
const ALNUM = `${UPPER}abcdefghijklmnopqrstuvwxyz${DIGITS}`;
const B64URL = `${ALNUM}_-`;

const pem = fc
  .tuple(
    fc.constantFrom("RSA ", "EC ", "OPENSSH ", ""),
    chars(`${ALNUM}+/=\n`, 0, 300),
    fc.boolean(),
  )
  .map(([kind, body, ended]) => {
    const head = `-----BEGIN ${kind}PRIVATE KEY-----\n${body}`;
    return ended ? `${head}\n-----END ${kind}PRIVATE KEY-----` : head;
  });

/** One arbitrary per secret kind, named by the detector that must find it. */
export const SECRETS: Record<string, fc.Arbitrary<string>> = {
  "private-key": pem,
  "aws-access-key": chars(`${UPPER}${DIGITS}`, 16, 16).map((s) => `AKIA${s}`),
  "aws-secret-key": chars(`${ALNUM}/+`, 40, 40).map((s) => `aws_secret_access_key = "${s}"`),
  "github-token": chars(ALNUM, 36, 80).map((s) => `ghp_${s}`),
  "slack-token": chars(`${ALNUM}-`, 10, 60).map((s) => `xoxb-${s}`),
  "slack-webhook": chars(`${ALNUM}/_-`, 1, 60).map((s) => `https://hooks.slack.com/services/${s}`),
  "anthropic-key": chars(B64URL, 20, 90).map((s) => `sk-ant-${s}`),
  "openai-key": chars(B64URL, 19, 90).map((s) => `sk-proj-7${s}`),
  "stripe-key": chars(ALNUM, 16, 60).map((s) => `sk_live_${s}`),
  "google-api-key": chars(B64URL, 35, 35).map((s) => `AIza${s}`),
  jwt: fc
    .tuple(chars(B64URL, 8, 60), chars(B64URL, 8, 60), chars(B64URL, 8, 60))
    .map(([a, b, c]) => `eyJ${a}.eyJ${b}.${c}`),
  "bearer-token": chars(`${ALNUM}-._~+/`, 16, 60).map((s) => `Authorization: Bearer ${s}`),
  "url-password": fc
    .tuple(chars(ALNUM, 1, 20), chars(`${ALNUM}!$%&*`, 1, 30), chars(ALNUM, 1, 20))
    .map(([u, p, h]) => `postgres://${u}:${p}@${h}.internal/db`),
  credential: chars(`${ALNUM}!$%&*()[]{}<>`, 6, 40).map((s) => `password=${s}`),
  email: fc
    .tuple(chars(`${ALNUM}._+-`, 1, 30), chars(ALNUM, 1, 20), fc.constantFrom("com", "io", "co.uk"))
    .map(([local, domain, tld]) => `${local.replace(/^[.]+/, "x")}@${domain}.${tld}`),
};

/** Prose around the secrets: short words of the characters secrets are made of, and separators. */
const word = chars(`${ALNUM}.-_:=/@'"`, 0, 8);
const separator = fc.constantFrom(" ", "\n", ", ", ". ", "\t", " (", ") ");
export const prose = fc
  .array(fc.tuple(word, separator), { maxLength: 40 })
  .map((parts) => parts.map(([w, s]) => w + s).join(""));

/** Prose with secrets of the given kinds at random places (glued to a word or not). */
export function textWith(
  kinds: readonly string[],
  count: { minLength: number; maxLength: number },
) {
  const secret = fc.constantFrom(...kinds).chain((kind) => SECRETS[kind]!);
  return fc
    .tuple(
      prose,
      fc.array(
        fc.tuple(
          fc.constantFrom("", " ", "\n", ": ", '"'),
          secret,
          fc.constantFrom("", " ", "\n", '"'),
          prose,
        ),
        count,
      ),
    )
    .map(([head, rest]) => head + rest.map(([a, s, b, p]) => a + s + b + p).join(""));
}
