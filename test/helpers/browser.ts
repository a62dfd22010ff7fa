import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, type BrowserContext, chromium, type LaunchOptions, type Page } from 'playwright-core';
import type { TestClient } from './client.js';

/** Debian's Chromium; .ci/install-chromium.sh installs it. In CI the tests must run, never skip. */
export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const skipWithoutChromium =
  !fs.existsSync(CHROMIUM) && !process.env.CI
    ? `${CHROMIUM} is missing: run .ci/install-chromium.sh as root to enable the browser tests`
    : false;

export function launchChromium(extraArgs: string[] = [], options: LaunchOptions = {}): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs], ...options });
}

/** A browser context signed in with the session of `client` (set up through the API: faster). */
export async function signedInContext(
  browser: Browser,
  client: TestClient,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const session = client.cookies.get('session');
  assert.ok(session, 'the client is signed in');
  await context.addCookies([{ name: 'session', value: session, url: client.baseUrl }]);
  return context;
}

/** Retries `check` until it passes (the app and the sync engine work asynchronously). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page. The context must bypass the page's
 * CSP (`bypassCSP: true`), which rightly refuses the injected script.
 */
export async function seriousViolations(page: Page): Promise<{ id: string; nodes: string[] }[]> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as any).axe.run((globalThis as any).document);
    return result.violations.map((violation: any) => ({
      id: violation.id,
      impact: violation.impact,
      nodes: violation.nodes.map((node: any) => node.target.join(' ')),
    }));
  });
  return violations.filter(
    (violation: any) => violation.impact === 'serious' || violation.impact === 'critical',
  );
}

/**
 * A mouse drag as a person makes it: pressed at `from`, moved in steps to `to` (a pointer drag
 * picks up after a few pixels, then follows each move), `whileHeld` run there, then released.
 */
export async function mouseDrag(
  page: Page,
  from: { x: number; y: number },
  to: { x: number; y: number },
  whileHeld?: () => Promise<unknown>,
): Promise<void> {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(to.x, to.y, { steps: 10 });
  await whileHeld?.();
  await page.mouse.up();
}
