/**
 * Single sign-on in the web app (issue 33): the sign-in screen's "Sign in with <name>" button
 * leads to a real OpenID provider on 127.0.0.1, and back signed in; with PASSWORD_LOGIN=false
 * only the owner's recovery form is left besides it.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { skipWithoutChromium, useBrowser } from './helpers/browser.js';
import { addUser, OWNER_PASSWORD, setupOwner } from './helpers/client.js';
import { type ServerWithProvider, startServerWithProvider } from './helpers/oidcProvider.js';

describe('signing in with the identity provider in the browser', { skip: skipWithoutChromium }, () => {
  const browser = useBrowser();
  let setup: ServerWithProvider;

  before(async () => {
    setup = await startServerWithProvider(
      { bob: { email: 'bob@example.test', emailVerified: true, name: 'Bob' } },
      { PASSWORD_LOGIN: 'false' },
    );
    const owner = await setupOwner(setup.server);
    await addUser(owner, 'bob@example.test');
  });
  after(async () => {
    await setup?.server.close();
    await setup?.provider.close();
  });

  it('clicks "Sign in with Household ID", signs in at the provider and lands signed in', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(setup.server.url);
    const button = page.getByRole('button', { name: 'Sign in with Household ID' });
    await button.waitFor();
    // PASSWORD_LOGIN=false: no email field, the owner's recovery folded away.
    assert.equal(await page.getByRole('textbox', { name: 'Email' }).count(), 0);
    assert.equal(await page.getByText('Owner recovery').count(), 1);
    const signInScreen = path.join(os.tmpdir(), 'web-single-sign-on-screen.png');
    await page.screenshot({ path: signInScreen });

    await button.click();
    await page.waitForURL((url) => url.origin === setup.provider.issuer);
    await page.locator('input[name="login"]').fill('bob');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();

    await page.getByRole('textbox', { name: 'Take a note…' }).waitFor();
    assert.equal(new URL(page.url()).origin, setup.server.url);
    const status = await page.evaluate(() => fetch('/api/auth/status').then((r) => r.json()));
    assert.equal(status.user.email, 'bob@example.test');
    const landed = path.join(os.tmpdir(), 'web-single-sign-on-landed.png');
    await page.screenshot({ path: landed });
    await context.close();
  });

  it('lets the owner in through the recovery form', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(setup.server.url);
    await page.getByText('Owner recovery').click();
    await page.getByLabel('Password').fill(OWNER_PASSWORD);
    await page.getByRole('button', { name: 'Sign in as the owner' }).click();
    await page.getByRole('textbox', { name: 'Take a note…' }).waitFor();
    const status = await page.evaluate(() => fetch('/api/auth/status').then((r) => r.json()));
    assert.equal(status.user.isOwner, true);
    await context.close();
  });
});
