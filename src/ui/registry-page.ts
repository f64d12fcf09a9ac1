/**
 * The registry page: the revisions the bucket keeps, and for one of them (the one in force unless
 * asked) each entry's kind, hooks, order and failure mode, each Cedar set's source and hash, and
 * what changed from the revision before. Read with the auditor's rights, like the stops page.
 */
import type { Bus } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import { cedarSetHash } from "../cedar/set-hash.js";
import { isCedarPolicy, type RegistryPolicy } from "../registry/document.js";
import { diffRegistry, formatRegistryDiff } from "../registry/diff.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import { RegistryStore } from "../registry/store.js";
import { href, html, type Html } from "./html.js";
import { page, tableOrEmpty } from "./layout.js";
import { readParams, sequence } from "./params.js";

function entryRow(policy: RegistryPolicy): Html {
  return html`<tr>
    <td><b>${policy.name}</b></td>
    <td>${policy.kind ?? "worker"}</td>
    <td>${policy.hooks.join(", ")}</td>
    <td class="num">${String(policy.priority)}</td>
    <td>${policy.mode}</td>
    <td>${policy.failMode ?? "default"}</td>
    <td class="num">${policy.timeoutMs === undefined ? "" : `${policy.timeoutMs} ms`}</td>
  </tr>`;
}

/** A Cedar set's text and its hash: the `version` in its outcomes, and what coordinators report loaded. */
function cedarSource(policy: RegistryPolicy & { cedar: string }): Html {
  const hash = cedarSetHash(policy.cedar);
  return html`<details class="cedar">
    <summary>
      <b>${policy.name}</b> — Cedar, ${String(policy.cedar.length)} characters, accepted by
      <code>registry apply</code> (parsed and type-checked there)
      <div class="hash"><code>${hash}</code></div>
    </summary>
    <pre>${policy.cedar}</pre>
  </details>`;
}

function revisionList(revisions: { revision: number; storedAt: Date }[], shown: number): Html {
  return html`<ul class="revisions">
    ${revisions.map(
      (r) =>
        html`<li>
          ${
            r.revision === shown
              ? html`<b>revision ${String(r.revision)}</b>`
              : html`<a href="${href("/registry", { revision: r.revision })}"
                  >revision ${String(r.revision)}</a
                >`
          }
          <span class="muted">${r.storedAt.toISOString()}</span>
        </li>`,
    )}
  </ul>`;
}

async function snapshotAt(
  store: RegistryStore,
  revision: number | undefined,
): Promise<RegistrySnapshot> {
  if (revision === undefined) return store.current();
  const snapshot = await store.atRevision(revision);
  if (snapshot === undefined)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `revision: the registry bucket keeps no revision ${revision} (it keeps the last 64)`,
      { argument: "revision" },
    );
  return snapshot;
}

export async function registryPage(bus: Bus, url: URL): Promise<Html> {
  const params = readParams(url, ["revision"]);
  const store = await RegistryStore.open(bus.nc, bus.subjects);
  const [shown, revisions] = await Promise.all([
    snapshotAt(store, sequence(params, "revision")),
    store.revisions(),
  ]);
  if (shown.revision === 0)
    return page("Registry", html`<p>No registry was ever applied in this namespace.</p>`);
  const before = revisions.find((r) => r.revision < shown.revision);
  const previous = before === undefined ? undefined : await store.atRevision(before.revision);
  const diff =
    previous === undefined
      ? "the first revision the bucket keeps"
      : formatRegistryDiff(diffRegistry(previous.document, shown.document), previous.revision);
  const policies = shown.document.policies;
  return page(
    "Registry",
    html`<section class="registry-columns">
      <div class="col">
        <h2>Revisions</h2>
        ${revisionList(revisions, shown.revision)}
      </div>
      <div class="col">
        <h2>Revision ${String(shown.revision)}</h2>
        ${tableOrEmpty(
          "records registry-entries",
          ["policy", "kind", "hooks", "priority", "mode", "fail mode", "timeout"],
          policies.map(entryRow),
          "No policies: every hook is answered on the agents' fast path.",
        )}
        <h2>Changes</h2>
        <pre class="diff">${diff}</pre>
        <h2>Cedar sets</h2>
        ${policies.filter(isCedarPolicy).map(cedarSource)}
      </div>
    </section>`,
  );
}
