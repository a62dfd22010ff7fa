import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { after, before } from 'node:test';
import { type Browser, type BrowserContext, chromium, type LaunchOptions, type Page } from 'playwright-core';
import type { TestClient } from './client.js';
import { buildWebApp } from './webApp.js';

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

/** What the tests of a `useBrowser()` file use of its Chromium. */
export type BrowserHandle = Pick<Browser, 'newContext' | 'newPage'>;

/**
 * One Chromium for the tests of the file (called at the top level) or of the describe block it is
 * called in: launched in `before` (after building dist/web if stale, unless `webApp` is false),
 * closed in `after`. Without Chromium (skipWithoutChromium) nothing is launched: the tests skip.
 */
export function useBrowser({
  args = [],
  webApp = true,
}: {
  args?: string[];
  webApp?: boolean;
} = {}): BrowserHandle {
  let browser: Browser | undefined;
  before(async () => {
    if (skipWithoutChromium) return;
    if (webApp) buildWebApp();
    browser = await launchChromium(args);
  });
  after(() => browser?.close());
  const current = (): Browser => {
    if (browser === undefined)
      throw new Error('useBrowser(): launched in before(); use it from tests and hooks');
    return browser;
  };
  return {
    newContext: (options) => current().newContext(options),
    newPage: (options) => current().newPage(options),
  };
}

/** A browser context signed in with the session of `client` (set up through the API: faster). */
export async function signedInContext(
  browser: BrowserHandle,
  client: TestClient,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const session = client.cookies.get('session');
  assert.ok(session, 'the client is signed in');
  await context.addCookies([{ name: 'session', value: session, url: client.baseUrl }]);
  return context;
}

/** A page of a context signed in as `client` (signedInContext), opened at the app's start. */
export async function signedInPage(
  browser: BrowserHandle,
  client: TestClient,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await signedInContext(browser, client, options);
  const page = await context.newPage();
  await page.goto(client.baseUrl);
  return { context, page };
}

/** The card of the note named `name` in the app's grid or list. */
export const card = (page: Page, name: string) => page.getByRole('article', { name, exact: true });

/** What the person does when coming back to the tab: the engine pulls and pushes on focus. */
export const focus = (page: Page) => page.evaluate("window.dispatchEvent(new Event('focus'))");

/** Takes a note `text` in the composer, closes it, and waits for its card. */
export async function compose(page: Page, text: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Take a note…' }).click();
  await page.getByRole('textbox', { name: 'Take a note…' }).fill(text);
  await page.getByRole('button', { name: 'Close' }).click();
  await card(page, text).waitFor();
}

/**
 * Retries `check` until it passes (the app and the sync engine work asynchronously). Give each
 * assert.ok in a check a message: without one, node builds it from the call's source, and a test
 * run with tsx (`node --import tsx --test`) has it parse the TypeScript, which held the event loop
 * for ~55 s a failure, past any deadline. `npm test` runs compiled tests and is not affected.
 */
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
