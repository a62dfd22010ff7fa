import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { freePort } from '../bench/processes.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { safeReturnPath } from '../src/features/auth/singleSignOn.js';
import { addUser, clientOf, OWNER_PASSWORD, setupOwner } from './helpers/client.js';
import {
  type ServerWithProvider,
  startServerWithProvider,
  startTestProvider,
  type TestProvider,
} from './helpers/oidcProvider.js';
import { startServer, type TestServer, tempDataDir } from './helpers/server.js';

/**
 * Single sign-on (issue 33) against a real OpenID provider on 127.0.0.1, driven like a browser:
 * redirects followed by hand, cookies kept per host, the provider's sign-in form filled in.
 */

/** Cookies per host (browsers do not split them by port), sent on every request to that host. */
class Browser {
  readonly jar = new Map<string, Map<string, string>>();

  cookie(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).hostname)?.get(name);
  }

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const host = new URL(url).hostname;
    const cookies = this.jar.get(host) ?? new Map<string, string>();
    this.jar.set(host, cookies);
    const headers: Record<string, string> = {};
    if (cookies.size > 0) headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const response = await fetch(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      const expired = attributes.some((a) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(a));
      if (value === '' || expired) cookies.delete(name);
      else cookies.set(name, value);
    }
    return {
      status: response.status,
      location: response.headers.get('location'),
      text: await response.text(),
      response,
    };
  }

  /**
   * Follows redirects from `url` until a page answers, or until the next URL is one `stopAt`
   * accepts (returned unvisited). Forms of the provider's sign-in page are not submitted here.
   */
  async follow(url: string, stopAt: (next: string) => boolean = () => false) {
    let current = url;
    for (let hops = 0; hops < 20; hops++) {
      if (stopAt(current)) return { url: current, stopped: true as const };
      const answer = await this.request(current);
      if (answer.status < 300 || answer.status >= 400 || !answer.location)
        return { url: current, stopped: false as const, ...answer };
      current = new URL(answer.location, current).href;
    }
    throw new Error('too many redirects');
  }
}

const isCallback = (url: string) => new URL(url).pathname === '/api/auth/oidc/callback';

/**
 * Clicks "Sign in with …" and signs in at the provider as `login`, stopping at the redirect back
 * to this server: the callback URL (with code and state), not yet visited.
 */
async function signInAtProvider(browser: Browser, server: TestServer, login: string, returnTo?: string) {
  const start = `${server.url}/api/auth/oidc/login${returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`}`;
  const page = await browser.follow(start);
  assert.equal(page.stopped, false);
  assert.equal(page.status, 200, page.text);
  const action = /<form[^>]*action="([^"]+)"/.exec(page.text!)?.[1];
  assert.ok(action, `the provider shows its sign-in form: ${page.text}`);
  const posted = await browser.request(new URL(action, page.url).href, {
    method: 'POST',
    form: { prompt: 'login', login, password: 'anything' },
  });
  assert.ok(posted.location, `the provider redirects after sign-in: ${posted.status} ${posted.text}`);
  const back = await browser.follow(new URL(posted.location, page.url).href, isCallback);
  assert.ok(back.stopped, 'the provider sends the browser back to the callback');
  return back.url;
}

async function statusOf(browser: Browser, server: TestServer) {
  const answer = await browser.request(`${server.url}/api/auth/status`);
  return JSON.parse(answer.text);
}

describe('single sign-on with a real OpenID provider', () => {
  let setup: ServerWithProvider;
  let bobId: number;

  before(async () => {
    setup = await startServerWithProvider({
      bob: { email: 'Bob@Example.test', emailVerified: true, name: 'Bob at the provider' },
      mallory: { email: 'carol@example.test', emailVerified: false, name: 'Not Carol' },
      stranger: { email: 'stranger@example.test', emailVerified: true },
    });
    const owner = await setupOwner(setup.server);
    bobId = await addUser(owner, 'bob@example.test', 'bobs password', 'Bob');
    await addUser(owner, 'carol@example.test', 'carols password', 'Carol');
  });
  after(async () => {
    await setup.server.close();
    await setup.provider.close();
  });

  it('says in /api/auth/status that single sign-on is available, and its name', async () => {
    const status = await statusOf(new Browser(), setup.server);
    assert.deepEqual(status.singleSignOn, { displayName: 'Household ID', available: true });
    assert.equal(status.passwordLogin, true);
  });

  it('signs in the account with the verified email, lands on the return path, and then by subject', async () => {
    const browser = new Browser();
    const callback = await signInAtProvider(browser, setup.server, 'bob', '/notes?view=list#top');
    const landed = await browser.request(callback);
    assert.equal(landed.status, 302, landed.text);
    assert.equal(landed.location, '/notes?view=list#top');
    const status = await statusOf(browser, setup.server);
    assert.equal(status.authenticated, true);
    assert.equal(status.user.id, bobId);
    // The same cookie as a password sign-in: the API answers it.
    assert.equal((await browser.request(`${setup.server.url}/api/notes`)).status, 200);
    assert.equal(browser.cookie(setup.server.url, 'oidc_state'), undefined, 'the sign-on cookie is cleared');

    // The link holds even when the email at the provider changes.
    setup.provider.accounts.set('bob', { email: 'bob.new@example.test', emailVerified: true });
    const again = new Browser();
    await again.request(await signInAtProvider(again, setup.server, 'bob'));
    assert.equal((await statusOf(again, setup.server)).user.id, bobId);
  });

  it('refuses a callback whose state is not the one this browser was given', async () => {
    const browser = new Browser();
    const callback = new URL(await signInAtProvider(browser, setup.server, 'bob'));
    callback.searchParams.set('state', 'forged-state');
    const refused = await browser.request(callback.href);
    assert.equal(refused.status, 400);
    assert.match(refused.response.headers.get('content-type')!, /^text\/html/);
    assert.match(refused.text, /Single sign-on did not complete/);
    assert.doesNotMatch(refused.text, /at \w+ \(|node_modules/, 'no stack');
    assert.equal((await statusOf(browser, setup.server)).authenticated, false);

    // The genuine callback in another browser (no oidc_state cookie): refused too (login CSRF).
    const genuine = new URL(await signInAtProvider(new Browser(), setup.server, 'bob'));
    const elsewhere = new Browser();
    assert.equal((await elsewhere.request(genuine.href)).status, 400);
    assert.equal((await statusOf(elsewhere, setup.server)).authenticated, false);
  });

  it('refuses a replayed callback, and a used code under a new state', async () => {
    const browser = new Browser();
    const callback = await signInAtProvider(browser, setup.server, 'bob');
    const cookie = browser.cookie(setup.server.url, 'oidc_state')!;
    assert.equal((await browser.request(callback)).status, 302);

    // The same URL and cookie again: the sign-on was used.
    const replay = new Browser();
    replay.jar.set('127.0.0.1', new Map([['oidc_state', cookie]]));
    const replayed = await replay.request(callback);
    assert.equal(replayed.status, 400);
    assert.match(replayed.text, /used already or has expired/);
    assert.equal((await statusOf(replay, setup.server)).authenticated, false);

    // The used code with a fresh sign-on's state and cookie: the provider refuses the code.
    const attacker = new Browser();
    const fresh = new URL(await signInAtProvider(attacker, setup.server, 'stranger'));
    fresh.searchParams.set('code', new URL(callback).searchParams.get('code')!);
    const grafted = await attacker.request(fresh.href);
    assert.equal(grafted.status, 400);
    assert.match(grafted.text, /did not confirm it/);
    assert.equal((await statusOf(attacker, setup.server)).authenticated, false);
  });

  it('does not link an account by an email the provider has not verified', async () => {
    const browser = new Browser();
    const refused = await browser.request(await signInAtProvider(browser, setup.server, 'mallory'));
    assert.equal(refused.status, 403);
    assert.match(refused.text, /does not say your email address is verified/);
    assert.equal((await statusOf(browser, setup.server)).authenticated, false);
    // Carol's password still signs her in, and nothing was linked: mallory is refused again.
    const carol = clientOf(setup.server);
    assert.equal(
      (await carol.post('/api/auth/login', { email: 'carol@example.test', password: 'carols password' }))
        .status,
      200,
    );
    const again = new Browser();
    assert.equal((await again.request(await signInAtProvider(again, setup.server, 'mallory'))).status, 403);
  });

  it('refuses a provider account with no account here while auto-create is off', async () => {
    const browser = new Browser();
    const refused = await browser.request(await signInAtProvider(browser, setup.server, 'stranger'));
    assert.equal(refused.status, 403);
    assert.match(refused.text, /has no account here/);
    const users = await (await setupOwnerClient(setup.server)).get('/api/users');
    assert.ok(!users.text.includes('stranger@example.test'), 'no account was created');
  });

  it('lands on / whatever foreign place the return path names (no open redirect)', async () => {
    for (const returnTo of [
      '//evil.example/x',
      'https://evil.example/',
      '/\\evil.example',
      '/%0a/evil.example',
      'javascript:alert(1)',
    ]) {
      const browser = new Browser();
      const landed = await browser.request(await signInAtProvider(browser, setup.server, 'bob', returnTo));
      assert.equal(landed.status, 302);
      assert.ok(
        landed.location!.startsWith('/') && !landed.location!.startsWith('//'),
        `${returnTo} → ${landed.location}`,
      );
      assert.equal(new URL(landed.location!, setup.server.url).origin, setup.server.url);
    }
  });
});

async function setupOwnerClient(server: TestServer) {
  const owner = clientOf(server);
  const response = await owner.post('/api/auth/login', { password: OWNER_PASSWORD });
  assert.equal(response.status, 200);
  return owner;
}

describe('single sign-on options', () => {
  it('creates an account at the first sign-on with OIDC_AUTO_CREATE_USERS=true', async () => {
    const setup = await startServerWithProvider(
      { newcomer: { email: 'new@example.test', emailVerified: true, name: 'New Person' } },
      { OIDC_AUTO_CREATE_USERS: 'true' },
    );
    try {
      await setupOwner(setup.server);
      const browser = new Browser();
      assert.equal(
        (await browser.request(await signInAtProvider(browser, setup.server, 'newcomer'))).status,
        302,
      );
      const status = await statusOf(browser, setup.server);
      assert.equal(status.user.email, 'new@example.test');
      assert.equal(status.user.displayName, 'New Person');
      // The new account has no password: no password signs it in.
      const guess = await clientOf(setup.server).post('/api/auth/login', {
        email: 'new@example.test',
        password: 'x',
      });
      assert.equal(guess.status, 401);
    } finally {
      await setup.server.close();
      await setup.provider.close();
    }
  });

  it('with PASSWORD_LOGIN=false refuses password sign-in but the owner recovery sign-in', async () => {
    const setup = await startServerWithProvider({}, { PASSWORD_LOGIN: 'false' });
    try {
      const owner = await setupOwner(setup.server, { email: 'owner@example.test' });
      await addUser(owner, 'dana@example.test', 'danas password');
      const client = clientOf(setup.server);
      assert.equal((await client.get('/api/auth/status')).body.passwordLogin, false);
      const dana = await client.post('/api/auth/login', {
        email: 'dana@example.test',
        password: 'danas password',
      });
      assert.equal(dana.status, 403);
      assert.equal(dana.body.code, 'password_login_disabled');
      // Even the owner's email is refused: only the recovery form (no email) remains.
      const byEmail = await client.post('/api/auth/login', {
        email: 'owner@example.test',
        password: OWNER_PASSWORD,
      });
      assert.equal(byEmail.body.code, 'password_login_disabled');
      const recovery = await client.post('/api/auth/login', { password: OWNER_PASSWORD });
      assert.equal(recovery.status, 200);
      assert.equal((await client.get('/api/auth/status')).body.user.isOwner, true);
      const wrong = await clientOf(setup.server).post('/api/auth/login', { password: 'not it' });
      assert.equal(wrong.status, 401);
    } finally {
      await setup.server.close();
      await setup.provider.close();
    }
  });

  it('starts while the provider is down, logs it, answers 503, and signs in once it is up', async () => {
    const port = await freePort();
    const providerPort = await freePort();
    const log = new PassThrough();
    let logged = '';
    log.on('data', (chunk) => {
      logged += chunk;
    });
    const server = await startServer({
      port,
      logStream: log,
      env: {
        LOG_LEVEL: 'info',
        OIDC_ISSUER_URL: `http://127.0.0.1:${providerPort}`,
        OIDC_CLIENT_ID: 'notes',
        OIDC_CLIENT_SECRET: 'a-test-client-secret-of-enough-length',
      },
    });
    let provider: TestProvider | undefined;
    try {
      assert.match(logged, /single sign-on: the provider at http:\/\/127\.0\.0\.1:\d+\/ cannot be reached/);
      const browser = new Browser();
      assert.deepEqual((await statusOf(browser, server)).singleSignOn, {
        displayName: 'Single sign-on',
        available: false,
      });
      const refused = await browser.request(`${server.url}/api/auth/oidc/login`);
      assert.equal(refused.status, 503);
      assert.match(refused.text, /cannot be reached right now/);
      assert.equal(refused.response.headers.get('retry-after'), '5');

      provider = await startTestProvider(
        `http://127.0.0.1:${port}/api/auth/oidc/callback`,
        { bob: { email: 'bob@example.test', emailVerified: true } },
        { port: providerPort },
      );
      const deadline = Date.now() + 15_000;
      while (!(await statusOf(browser, server)).singleSignOn.available) {
        assert.ok(Date.now() < deadline, 'discovery is retried');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.match(logged, /the provider is reachable now/);
      const owner = await setupOwner(server);
      await addUser(owner, 'bob@example.test');
      assert.equal((await browser.request(await signInAtProvider(browser, server, 'bob'))).status, 302);
      assert.equal((await statusOf(browser, server)).authenticated, true);
    } finally {
      await server.close();
      await provider?.close();
    }
  });

  it('answers a page, not JSON, when single sign-on is not configured', async () => {
    const server = await startServer();
    try {
      const browser = new Browser();
      assert.equal((await statusOf(browser, server)).singleSignOn, null);
      const answer = await browser.request(`${server.url}/api/auth/oidc/login`);
      assert.equal(answer.status, 404);
      assert.match(answer.text, /<h1>Sign-in did not work<\/h1>/);
    } finally {
      await server.close();
    }
  });
});

describe('the return path after a sign-on', () => {
  it('is always a path of this site', () => {
    const base = 'https://notes.example';
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.webUrl(),
          fc.webPath(),
          fc.constantFrom('//a', '/\\a', '\\\\a', '/\t/a', ' //a', '/%2F/a', '/..//a'),
          fc.string().map((s) => `/${s}`),
        ),
        (raw) => {
          const safe = safeReturnPath(raw);
          assert.ok(safe.startsWith('/') && !safe.startsWith('//') && !safe.includes('\\'), safe);
          assert.equal(new URL(safe, base).origin, base);
        },
      ),
    );
    assert.equal(safeReturnPath('/notes/1?q=a#b'), '/notes/1?q=a#b');
    assert.equal(safeReturnPath('//evil.example'), '/');
  });
});

describe('single sign-on settings', () => {
  const sso = { OIDC_ISSUER_URL: 'https://auth.example/realms/home', OIDC_CLIENT_ID: 'notes' };

  it('are read with their defaults', () => {
    const config = loadConfig({ ...sso, OIDC_CLIENT_SECRET: 's3cret' });
    assert.equal(config.oidcDisplayName, 'Single sign-on');
    assert.equal(config.oidcScopes, 'openid email profile');
    assert.equal(config.oidcAutoCreateUsers, false);
    assert.equal(config.passwordLogin, true);
    assert.equal(loadConfig({}).oidcIssuerUrl, null);
  });

  it('read the secret from OIDC_CLIENT_SECRET_FILE', () => {
    const file = path.join(tempDataDir(), 'secret');
    fs.writeFileSync(file, 'from-a-file\n');
    assert.equal(loadConfig({ ...sso, OIDC_CLIENT_SECRET_FILE: file }).oidcClientSecret, 'from-a-file');
    assert.throws(
      () => loadConfig({ ...sso, OIDC_CLIENT_SECRET_FILE: `${file}.missing` }),
      /cannot be read \(ENOENT\)/,
    );
  });

  it('refuse what cannot work, naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ OIDC_ISSUER_URL: sso.OIDC_ISSUER_URL }, /OIDC_ISSUER_URL needs OIDC_CLIENT_ID/],
      [sso, /OIDC_ISSUER_URL needs OIDC_CLIENT_SECRET \(or OIDC_CLIENT_SECRET_FILE\)/],
      [
        { ...sso, OIDC_CLIENT_SECRET: 'a', OIDC_CLIENT_SECRET_FILE: '/x' },
        /either OIDC_CLIENT_SECRET or OIDC_CLIENT_SECRET_FILE, not both/,
      ],
      [{ OIDC_CLIENT_ID: 'notes' }, /need OIDC_ISSUER_URL/],
      [{ PASSWORD_LOGIN: 'false' }, /PASSWORD_LOGIN=false needs single sign-on/],
      [
        { ...sso, OIDC_CLIENT_SECRET: 'a', OIDC_ISSUER_URL: 'ftp://auth.example' },
        /OIDC_ISSUER_URL must use https/,
      ],
      [{ ...sso, OIDC_CLIENT_SECRET: 'a', OIDC_SCOPES: 'email profile' }, /OIDC_SCOPES must include openid/],
      [
        { ...sso, OIDC_CLIENT_SECRET: 'a', OIDC_AUTO_CREATE_USERS: 'yes' },
        /OIDC_AUTO_CREATE_USERS must be one of/,
      ],
      [{ ...sso, OIDC_CLIENT_SECRET: 'a', PASSWORD_LOGIN: 'no' }, /PASSWORD_LOGIN must be one of/],
    ];
    for (const [env, message] of cases)
      assert.throws(
        () => loadConfig(env),
        (e) => e instanceof ConfigError && message.test(e.message),
      );
  });
});
