import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/** scrypt's cost parameters; they are stored with every hash, so verifying needs none. */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * Production cost: memory-hard (32 MiB), ~110 ms on a small machine (D-AUTH-7). At 32 MiB glibc
 * always maps scrypt's memory on its own and gives it back when the hash is done; at 16 MiB it
 * kept it in the worker thread's heap, up to 64 MiB for good (decision 0046).
 */
const PASSWORD_COST: ScryptCost = { N: 32_768, r: 8, p: 1 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      KEY_LENGTH,
      { ...options, maxmem: 80 * 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

/** `scrypt$N$r$p$salt$hash` with base64url salt and hash; the parameters travel with the hash. */
async function hashPassword(password: string, cost: ScryptCost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * Hashing at one cost, with a dummy hash of the same cost to verify against when the user does
 * not exist, so both cases take the same time (D-AUTH-3). Only tests pass a cheaper cost
 * (BuildOptions.passwordCost); every hash records its own cost, so verifying never needs it.
 */
export function createPasswordHasher(cost: ScryptCost = PASSWORD_COST) {
  let dummyHash: Promise<string> | undefined;
  const prefix = `scrypt$${cost.N}$${cost.r}$${cost.p}$`;
  return {
    hash: (password: string) => hashPassword(password, cost),
    verify: verifyPassword,
    /** A hash made at another cost (an older default): signing in replaces it (decision 0046). */
    isOutdated: (stored: string) => stored !== '' && !stored.startsWith(prefix),
    dummyHash(): Promise<string> {
      dummyHash ??= hashPassword(randomBytes(16).toString('hex'), cost);
      return dummyHash;
    },
  };
}
export type PasswordHasher = ReturnType<typeof createPasswordHasher>;
