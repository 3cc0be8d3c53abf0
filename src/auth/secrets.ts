import { createHash, randomBytes, scrypt, timingSafeEqual, type BinaryLike, type ScryptOptions } from "node:crypto";

/** Password, key and token hashing. Nothing secret is ever stored in clear. */

const SCRYPT = { N: 16384, r: 8, p: 1, keyLength: 32 };

function scryptAsync(password: BinaryLike, salt: BinaryLike, keyLength: number, options: ScryptOptions) {
  return new Promise<Buffer>((resolve, reject) => scrypt(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/** A slow salted hash, self-describing so that its parameters can change later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keyLength } = SCRYPT;
  const key = await scryptAsync(password, salt, keyLength, { N, r, p });
  return ["scrypt", N, r, p, salt.toString("base64"), key.toString("base64")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const key = await scryptAsync(password, Buffer.from(salt, "base64"), expected.length, {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(key, expected);
}

let dummyHash: Promise<string> | undefined;

/**
 * Checks a password against a user's stored hash; for no user (unknown or inactive), spends the
 * same scrypt work on a throwaway hash and fails, so that response time does not tell which
 * usernames exist.
 */
export async function verifyUserPassword(password: string, stored: string | undefined): Promise<boolean> {
  if (stored !== undefined) return verifyPassword(password, stored);
  dummyHash ??= hashPassword(randomBytes(16).toString("hex"));
  await verifyPassword(password, await dummyHash);
  return false;
}

export type DigestAlgorithm = "MD5" | "SHA-256";
export const NODE_HASH: Record<DigestAlgorithm, string> = { MD5: "md5", "SHA-256": "sha256" };

/** RFC 7616 HA1 = H(username:realm:password): what Digest needs in place of the password. */
export function digestHa1(algorithm: DigestAlgorithm, username: string, realm: string, password: string): string {
  return createHash(NODE_HASH[algorithm]).update(`${username}:${realm}:${password}`).digest("hex");
}

/** API keys and OAuth tokens are long random strings: a fast hash is enough to store them. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * Compares two strings in time independent of where they differ and of their lengths: both sides
 * are hashed to 32 bytes first, then compared with crypto.timingSafeEqual. Every comparison of a
 * secret, hash, signature or Digest response in src/auth (and the cursor HMAC) goes through here
 * or through timingSafeEqual directly (verifyPassword).
 */
export function safeEqual(a: string, b: string): boolean {
  const left = createHash("sha256").update(a).digest();
  const right = createHash("sha256").update(b).digest();
  return timingSafeEqual(left, right);
}
