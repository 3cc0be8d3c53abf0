import { createHmac, randomBytes } from "node:crypto";
import { DIGEST } from "http-auth-utils";
import type { Prisma } from "../db/client.ts";
import { safeEqual, NODE_HASH, type DigestAlgorithm } from "./secrets.ts";

/**
 * RFC 7616 Digest (MD5 and SHA-256, qop=auth). Header parsing and response hashing come from
 * http-auth-utils; this file holds the server's side: stateless signed nonces with an expiry, and
 * a per-nonce count stored on first use so that a replayed (nonce, nc) is refused on any process.
 */

export interface DigestUser {
  id: string;
  username: string;
  digestHa1Md5: string;
  digestHa1Sha256: string;
}

export type DigestOutcome = { ok: true; username: string } | { ok: false; stale: boolean };

const ALGORITHMS: DigestAlgorithm[] = ["SHA-256", "MD5"];

/** nc counts requests from 00000001 (RFC 7616 §3.4); the stored count is a 32-bit signed integer. */
const MAX_NC = 0x7fffffff;

export class DigestAuth {
  constructor(
    private readonly prisma: Prisma,
    private readonly realm: string,
    private readonly key: string,
    private readonly nonceTtlMs: number,
  ) {}

  /** One challenge per algorithm, strongest first (RFC 7616 §3.7). */
  challenges(stale = false): string[] {
    const nonce = this.newNonce();
    const opaque = this.sign("opaque");
    return ALGORITHMS.map((algorithm) => {
      const rest = DIGEST.buildWWWAuthenticateRest({ realm: this.realm, qop: "auth", nonce, opaque });
      return `Digest ${rest}, algorithm=${algorithm}${stale ? ", stale=true" : ""}`;
    });
  }

  /** The username a Digest header claims, before anything is verified. */
  claimedUsername(rest: string): string | undefined {
    try {
      return DIGEST.parseAuthorizationRest(rest).username || undefined;
    } catch {
      return undefined;
    }
  }

  async verify(rest: string, method: string, uri: string, user: DigestUser | null): Promise<DigestOutcome> {
    let data: ReturnType<typeof DIGEST.parseAuthorizationRest>;
    try {
      data = DIGEST.parseAuthorizationRest(rest);
    } catch {
      return { ok: false, stale: false };
    }
    const algorithm = (data.algorithm ?? "MD5").toUpperCase() as DigestAlgorithm;
    if (!user || !ALGORITHMS.includes(algorithm)) return { ok: false, stale: false };
    if (data.realm !== this.realm || data.qop !== "auth" || !data.cnonce || !data.nc || !/^[0-9a-f]{8}$/i.test(data.nc)) {
      return { ok: false, stale: false };
    }
    const nc = parseInt(data.nc, 16);
    if (nc < 1 || nc > MAX_NC) return { ok: false, stale: false };
    if (data.uri !== uri || data.username !== user.username) return { ok: false, stale: false };
    const nonceState = this.checkNonce(data.nonce);
    if (nonceState === "invalid") return { ok: false, stale: false };

    const ha1 = algorithm === "MD5" ? user.digestHa1Md5 : user.digestHa1Sha256;
    const expected = DIGEST.computeHash({
      ha1,
      algorithm: NODE_HASH[algorithm],
      method,
      uri: data.uri,
      realm: this.realm,
      username: user.username,
      password: "",
      nonce: data.nonce,
      nc: data.nc,
      cnonce: data.cnonce,
      qop: "auth",
    });
    if (!safeEqual(expected, data.response ?? "")) return { ok: false, stale: false };
    // Right credentials on an expired nonce: the client should retry with a fresh one (stale=true).
    if (nonceState === "expired") return { ok: false, stale: true };
    const fresh = await this.recordNonceCount(data.nonce, nc);
    return fresh ? { ok: true, username: user.username } : { ok: false, stale: true };
  }

  private sign(value: string): string {
    return createHmac("sha256", this.key).update(value).digest("base64url");
  }

  private newNonce(): string {
    const issued = Date.now().toString(36);
    const random = randomBytes(8).toString("hex");
    const body = `${issued}.${random}`;
    return `${body}.${this.sign(body)}`;
  }

  private checkNonce(nonce: string | undefined): "valid" | "expired" | "invalid" {
    const parts = (nonce ?? "").split(".");
    if (parts.length !== 3) return "invalid";
    const [issued, random] = parts;
    if (!safeEqual(this.sign(`${issued}.${random}`), parts[2])) return "invalid";
    const age = Date.now() - parseInt(issued, 36);
    return age >= 0 && age <= this.nonceTtlMs ? "valid" : "expired";
  }

  /** True when nc is higher than any count seen for this nonce (atomically, across processes). */
  private async recordNonceCount(nonce: string, nc: number): Promise<boolean> {
    const expiresAt = new Date(Date.now() + this.nonceTtlMs);
    const rows = await this.prisma.$queryRaw<{ nonce: string }[]>`
      INSERT INTO digest_nonces (nonce, last_nc, expires_at) VALUES (${nonce}, ${nc}, ${expiresAt})
      ON CONFLICT (nonce) DO UPDATE SET last_nc = EXCLUDED.last_nc
      WHERE digest_nonces.last_nc < EXCLUDED.last_nc
      RETURNING nonce`;
    return rows.length === 1;
  }

  /** Forgets nonces that can no longer be used (their signature has expired anyway). */
  async purgeExpired(): Promise<void> {
    await this.prisma.digestNonce.deleteMany({ where: { expiresAt: { lt: new Date() } } });
  }
}
