/**
 * Who is signed in on this device, and the sync engine of that person. Start-up never waits for
 * the network: the last user's notes open from IndexedDB first, then /api/auth/status says
 * whether the session still holds (docs/webapp.md). A lost session keeps every local change
 * and asks to sign in again; signing out deletes the local database.
 */
import { signal } from '@preact/signals';
import { deleteLocalData, openSyncEngine } from '../sync/index.js';
import { type AuthStatus, fetchAuthStatus, setupOwner, signIn, signOut, type User } from './api.js';
import { closeMedia, deleteMedia, openMedia } from './media.js';
import { reloadPeople } from './people.js';
import { attachEngine, engine } from './state.js';

export type Screen =
  | { kind: 'loading' }
  | { kind: 'unreachable' }
  | { kind: 'setup' }
  | { kind: 'signIn' }
  | { kind: 'notes' };
export const screen = signal<Screen>({ kind: 'loading' });
/** The server no longer knows this device's session: the notes stay, the sign-in form shows. */
export const sessionLost = signal(false);
/** How the server lets people sign in (GET /api/auth/status): passwords, single sign-on, or both. */
export const signInOptions = signal<Pick<AuthStatus, 'passwordLogin' | 'singleSignOn'>>({
  passwordLogin: true,
  singleSignOn: null,
});

const USER_KEY = 'keepsake:user';
const PROFILE_KEY = 'keepsake:profile';

function rememberedProfile(): User | null {
  try {
    return JSON.parse(localStorage.getItem(PROFILE_KEY) ?? 'null');
  } catch {
    return null;
  }
}

/** Who is signed in, as the server last said (kept for offline starts: names, the owner's pages). */
export const currentUser = signal<User | null>(rememberedProfile());

function rememberProfile(user: User | null): void {
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

async function openNotesOf(userId: string): Promise<void> {
  if (engine.value?.userId === userId) {
    screen.value = { kind: 'notes' };
    return;
  }
  await closeEngine();
  const opened = await openSyncEngine({ userId, baseUrl: '' });
  detach = attachEngine(opened);
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
  if (remembered) await openNotesOf(remembered);
  let status: AuthStatus;
  try {
    status = await fetchAuthStatus();
  } catch {
    // Offline or the server is down: the local notes are on screen already, or nothing can be.
    if (!remembered) screen.value = { kind: 'unreachable' };
    return;
  }
  signInOptions.value = { passwordLogin: status.passwordLogin, singleSignOn: status.singleSignOn };
  if (status.authenticated && status.user) {
    rememberProfile(status.user);
    await openNotesOf(String(status.user.id));
  } else if (remembered) sessionLost.value = true;
  else screen.value = { kind: status.setupRequired ? 'setup' : 'signIn' };
}

/** Setup or sign-in, then this user's notes (another user's never mix in: one database each). */
export async function authenticate(mode: 'setup' | 'signIn', password: string, email: string): Promise<void> {
  await (mode === 'setup' ? setupOwner : signIn)(password, email);
  const status = await fetchAuthStatus();
  if (!status.user) throw new Error('Signed in, but the session did not hold: are cookies blocked?');
  sessionLost.value = false;
  rememberProfile(status.user);
  await openNotesOf(String(status.user.id));
  await engine.value?.syncNow();
}

/**
 * Sign-out deletes this device's copy: changes still in the outbox go with it, so the Sign out
 * dialog offers the device's own export first (SignOutDialog).
 */
export async function signOutHere(): Promise<void> {
  const current = engine.value;
  if (!current) return;
  // Offline, the server's session outlives this; the device's copy goes all the same.
  await signOut().catch(() => undefined);
  await closeEngine();
  await deleteLocalData(current.userId);
  await deleteMedia(current.userId);
  localStorage.removeItem(USER_KEY);
  rememberProfile(null);
  sessionLost.value = false;
  screen.value = { kind: 'signIn' };
}
