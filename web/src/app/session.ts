/**
 * Who is signed in on this device, and the sync engine of that person. Start-up does not wait
 * long for the network: the last user's notes load from IndexedDB while /api/auth/status says
 * whether the session still holds, and show when it does or when the server cannot be asked
 * (offline). A session the server ended hides every note of that user until they sign in again
 * (docs/webapp.md "Shared computers"); their changes stay on the device meanwhile. Signing in as
 * someone else removes the previous user's data but the changes the server does not have yet;
 * signing out deletes the local database.
 */
import { effect, signal } from '@preact/signals';
import type { AuthStatus, UserProfile } from '../../../src/shared/api/people.js';
import { openSyncEngine } from '../sync/index.js';
import { fetchAuthStatus, setupOwner, signIn, signOut } from './api.js';
import { forgetOtherAccounts, removeAccountData, unsyncedNotes } from './device.js';
import { closeMedia, openMedia } from './media.js';
import { reloadPeople } from './people.js';
import { attachEngine, engine, syncStatus } from './state.js';

type Screen =
  | { kind: 'loading' }
  | { kind: 'unreachable' }
  | { kind: 'setup' }
  | { kind: 'signIn' }
  /** The server ended the session of `userId`: nothing of theirs shows until they sign in. */
  | { kind: 'sessionEnded'; userId: string; name: string; waiting: number }
  | { kind: 'notes' };
export const screen = signal<Screen>({ kind: 'loading' });
/** How the server lets people sign in (GET /api/auth/status): passwords, single sign-on, or both. */
export const signInOptions = signal<Pick<AuthStatus, 'passwordLogin' | 'singleSignOn'>>({
  passwordLogin: true,
  singleSignOn: null,
});

const USER_KEY = 'keepsake:user';
const PROFILE_KEY = 'keepsake:profile';
/** The user whose session the server ended: their notes stay hidden, even offline, until sign-in. */
const ENDED_KEY = 'keepsake:session-ended';
/** How long start-up waits for the server before showing the notes as offline. */
const STATUS_WAIT_MS = 3_000;
function rememberedProfile(): UserProfile | null {
  try {
    return JSON.parse(localStorage.getItem(PROFILE_KEY) ?? 'null');
  } catch {
    return null;
  }
}

/** Who is signed in, as the server last said (kept for offline starts: names, the owner's pages). */
export const currentUser = signal<UserProfile | null>(rememberedProfile());

function rememberProfile(user: UserProfile | null): void {
  currentUser.value = user;
  if (user) localStorage.setItem(PROFILE_KEY, JSON.stringify(user));
  else localStorage.removeItem(PROFILE_KEY);
}

function rememberedUser(): string | null {
  return localStorage.getItem(USER_KEY);
}

let detach: (() => void) | null = null;

async function closeEngine(): Promise<void> {
  await closeMedia();
  detach?.();
  detach = null;
  const current = engine.value;
  engine.value = null;
  await current?.close();
}

/** Opens the user's engine (their notes load) without showing anything yet. */
async function loadNotesOf(userId: string): Promise<void> {
  if (engine.value?.userId === userId) return;
  await closeEngine();
  detach = attachEngine(await openSyncEngine({ userId, baseUrl: '' }));
}

async function openNotesOf(userId: string): Promise<void> {
  await loadNotesOf(userId);
  const opened = engine.value!;
  // The first cards are painted before the media database opens: the engine reads the rest of
  // the notes (long work on the main thread) right after that paint, and would go first if this
  // waited for the open (decision 0018). Images ask for their files once it is open.
  screen.value = { kind: 'notes' };
  await openMedia(opened);
  localStorage.setItem(USER_KEY, userId);
  reloadPeople();
}

export async function boot(): Promise<void> {
  const remembered = rememberedUser();
  const asking = fetchAuthStatus()
    .then((status) => {
      signInOptions.value = { passwordLogin: status.passwordLogin, singleSignOn: status.singleSignOn };
      return status;
    })
    .catch(() => null);
  if (!remembered) {
    const status = await asking;
    // Offline or the server is down, with nothing on the device to show.
    if (!status) screen.value = { kind: 'unreachable' };
    else await settle(status, null);
    return;
  }
  if (localStorage.getItem(ENDED_KEY) === remembered) {
    await endSession(remembered);
    const status = await asking;
    if (status?.user) await signedIn(status.user, remembered);
    return;
  }
  const loading = loadNotesOf(remembered);
  const status = await Promise.race([asking, delay(STATUS_WAIT_MS).then(() => null)]);
  await loading;
  if (status) return settle(status, remembered);
  // Offline or the server is down: the notes show; the server has the last word when it answers.
  await openNotesOf(remembered);
  const late = await asking;
  if (late) await settle(late, remembered);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function settle(status: AuthStatus, remembered: string | null): Promise<void> {
  if (status.authenticated && status.user) await signedIn(status.user, remembered);
  else if (remembered) await endSession(remembered);
  else screen.value = { kind: status.setupRequired ? 'setup' : 'signIn' };
}

/** The server knows `user` on this browser: their notes, and only theirs. */
async function signedIn(user: UserProfile, remembered: string | null): Promise<void> {
  const userId = String(user.id);
  if (remembered !== userId) {
    await closeEngine();
    await forgetOtherAccounts(userId);
  }
  localStorage.removeItem(ENDED_KEY);
  rememberProfile(user);
  await openNotesOf(userId);
}

/**
 * The server ended the session of `userId` (expiry, sign-out elsewhere, a new password): their
 * notes leave the screen and memory; their changes stay in the database for their next sign-in.
 */
async function endSession(userId: string): Promise<void> {
  localStorage.setItem(ENDED_KEY, userId);
  await closeEngine();
  const profile = currentUser.peek();
  screen.value = {
    kind: 'sessionEnded',
    userId,
    name: profile && String(profile.id) === userId ? profile.displayName || profile.email || 'Owner' : '',
    waiting: await unsyncedNotes(userId),
  };
}

// The engine finds the session gone while the notes are open: they close at once.
effect(() => {
  const current = engine.value;
  if (current && syncStatus.value.phase === 'signedOut') void endSession(current.userId);
});

// Another tab signed in, out or lost its session: this one starts over from what it left.
addEventListener('storage', (event) => {
  if (event.key === USER_KEY || event.key === ENDED_KEY || event.key === null) location.reload();
});

/** Setup or sign-in, then this user's notes (another user's never mix in: one database each). */
export async function authenticate(mode: 'setup' | 'signIn', password: string, email: string): Promise<void> {
  await (mode === 'setup' ? setupOwner : signIn)(password, email);
  const status = await fetchAuthStatus();
  if (!status.user) throw new Error('Signed in, but the session did not hold: are cookies blocked?');
  await signedIn(status.user, rememberedUser());
  await engine.value?.syncNow();
}

/** "Remove this account's data from this device", asked on the session-ended screen. */
export async function removeEndedAccount(userId: string): Promise<void> {
  await closeEngine();
  await removeAccountData(userId);
  currentUser.value = null;
  screen.value = { kind: 'signIn' };
}

/**
 * Sign-out deletes this device's copy: changes still in the outbox go with it, so the Sign out
 * dialog says so and offers the device's own export first (SignOutDialog).
 */
export async function signOutHere(): Promise<void> {
  const current = engine.value;
  if (!current) return;
  // Offline, the server's session outlives this; the device's copy goes all the same.
  await signOut().catch(() => undefined);
  await closeEngine();
  await removeAccountData(current.userId);
  currentUser.value = null;
  screen.value = { kind: 'signIn' };
}
