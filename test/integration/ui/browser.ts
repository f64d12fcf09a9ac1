/**
 * A real browser for the UI tests: Debian's Chromium (`apt-get install chromium`, installed by
 * scripts/setup.sh) driven by playwright-core, headless, with a new empty profile each time.
 * Screenshots go to test/artifacts/ui (git-ignored), to look at after a run.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.HOOKBUS_CHROMIUM ?? "/usr/bin/chromium";
export const SCREENSHOTS = join(import.meta.dirname, "..", "..", "artifacts", "ui");

export interface Browser {
  page: Page;
  /** Full-page screenshot as test/artifacts/ui/<name>.png. */
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function openBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: run scripts/setup.sh (apt-get install chromium) or set HOOKBUS_CHROMIUM`,
    );
  const profile = await mkdtemp(join(tmpdir(), "hookbus-ui-chromium-"));
  await mkdir(SCREENSHOTS, { recursive: true });
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      timeout: 60_000,
    });
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  return {
    page,
    async screenshot(name) {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    async close() {
      await context.close().catch(() => {});
      await rm(profile, { recursive: true, force: true });
    },
  };
}
