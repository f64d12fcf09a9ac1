/**
 * The emergency stops in force (`hookbus stop`), read from the registry bucket at each request.
 * Read-only like every page: stopping needs the operator's credentials, so the page shows the
 * command to resume instead.
 */
import type { Bus } from "../bus/bus.js";
import { StopStore } from "../registry/stops.js";
import { html, type Html } from "./html.js";
import { page, tableOrEmpty } from "./layout.js";
import { readParams } from "./params.js";

export async function stopsPage(bus: Bus, url: URL): Promise<Html> {
  readParams(url, []);
  const list = await (await StopStore.open(bus.nc, bus.subjects)).current();
  const rows = list.stops.map(
    (s) =>
      html`<tr>
        <td>${s.kind}</td>
        <td><code>${s.name}</code></td>
        <td>${s.by}</td>
        <td>${s.at}</td>
        <td>${s.reason}</td>
        <td><code>hookbus resume ${s.kind} ${s.name}</code></td>
      </tr>`,
  );
  return page(
    "Emergency stops",
    html`<p>
        Every call of these agents and tools is blocked by <code>hookbus:emergency-stop</code> at
        every coordinator (stop list revision ${String(list.revision)}).
      </p>
      ${tableOrEmpty(
        "stops",
        ["kind", "name", "stopped by", "at", "reason", "to resume"],
        rows,
        "No emergency stop is in force.",
      )}`,
  );
}
