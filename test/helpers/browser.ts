/**
 * Headless Chromium for page tests: Debian's `chromium` (/usr/bin/chromium, installed by .ci/run) driven by
 * playwright-core, one fresh profile per browser. Plus axe-core (serious/critical violations fail), first-load
 * weight, and screenshots under test-artifacts/screenshots/ (git-ignored) for a person to look at.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ROOT } from './processes.js';

export const CHROMIUM_PATH = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = join(ROOT, 'test-artifacts', 'screenshots');
export const PHONE = { width: 375, height: 812 } as const;
export const DESKTOP = { width: 1280, height: 900 } as const;

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** A new Chromium with its own empty profile (no cookies shared with any other session). Close it in afterAll. */
export async function openBrowser(
  opts: { viewport?: { width: number; height: number }; javaScriptEnabled?: boolean } = {},
): Promise<BrowserSession> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`${CHROMIUM_PATH} is missing: apt-get install -y chromium (as .ci/run does), or set SVC_CHROMIUM`);
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    viewport: opts.viewport ?? DESKTOP,
    javaScriptEnabled: opts.javaScriptEnabled ?? true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Runs axe-core on the current page; returns the serious and critical violations (empty means pass). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, so the page's CSP (no inline script) does not block it.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return axe.run();
  });
  return (
    result.violations as Array<{ id: string; impact: string | null; help: string; nodes: { target: string[] }[] }>
  )
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.flatMap((n) => n.target).slice(0, 5) }));
}

/** Fails the test with the page label and the violations when axe-core finds serious or critical ones. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  expect({ page: label, violations: await axeViolations(page) }).toEqual({ page: label, violations: [] });
}

/**
 * Loads `url` in a fresh tab of `session` and returns the bytes of every response of that first load (HTML, CSS,
 * JS, images), uncompressed: an upper bound of what was transferred.
 */
export async function firstLoadBytes(session: BrowserSession, url: string): Promise<number> {
  const tab = await session.context.newPage();
  let total = 0;
  const pending: Promise<void>[] = [];
  tab.on('response', (res) => {
    pending.push(
      res.body().then(
        (b) => {
          total += b.length;
        },
        () => undefined,
      ),
    );
  });
  await tab.goto(url, { waitUntil: 'load' });
  await Promise.all(pending);
  await tab.close();
  return total;
}

/** Saves a full-page PNG as test-artifacts/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
