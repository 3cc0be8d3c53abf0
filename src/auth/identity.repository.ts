import { Prisma } from "../generated/prisma/client.ts";
import type { Prisma as PrismaClient } from "../db/client.ts";
import { isUuid } from "../util/ids.ts";
import { isStorableText } from "../util/text.ts";
import type { DomainGrant } from "./principal.ts";

/**
 * Who a credential names, in one statement: the user's row, the API key's state when the credential
 * is a key, and every membership of the user with its domain. Authentication and the domain check
 * of the request that follows (src/auth/permissions.ts) then need no further query.
 */

const { sql } = Prisma;
type Db = Pick<PrismaClient, "$queryRaw">;

export interface IdentityRow {
  id: string;
  username: string;
  isSuperuser: boolean;
  isActive: boolean;
  passwordHash: string;
  digestHa1Md5: string;
  digestHa1Sha256: string;
  /** the API key's row, when looked up by key */
  keyId: string | null;
  keyRevoked: boolean;
  memberships: DomainGrant[];
}

interface Row {
  user_id: string;
  username: string;
  is_superuser: boolean;
  is_active: boolean;
  password_hash: string;
  digest_ha1_md5: string;
  digest_ha1_sha256: string;
  key_id: string | null;
  key_revoked: boolean;
  memberships: { id: string; name: string; permissions: string[] }[] | string;
}

const USER_COLUMNS = sql`u.id::text AS user_id, u.username, u.is_superuser, u.is_active, u.password_hash, u.digest_ha1_md5, u.digest_ha1_sha256,
  coalesce((SELECT json_agg(json_build_object('id', d.id::text, 'name', d.name, 'permissions', m.permissions))
    FROM memberships m JOIN domains d ON d.id = m.domain_id WHERE m.user_id = u.id), '[]'::json) AS memberships`;

function identity(row: Row | undefined): IdentityRow | null {
  if (!row) return null;
  // PGlite hands json back parsed; node-postgres through the adapter may hand it back as text
  const memberships = typeof row.memberships === "string" ? (JSON.parse(row.memberships) as Exclude<Row["memberships"], string>) : row.memberships;
  return {
    id: row.user_id,
    username: row.username,
    isSuperuser: row.is_superuser,
    isActive: row.is_active,
    passwordHash: row.password_hash,
    digestHa1Md5: row.digest_ha1_md5,
    digestHa1Sha256: row.digest_ha1_sha256,
    keyId: row.key_id,
    keyRevoked: row.key_revoked,
    memberships: memberships.map((m) => ({ id: m.id, name: m.name, permissions: [...m.permissions].sort() })),
  };
}

export class IdentityRepository {
  constructor(private readonly db: Db) {}

  /** The key's holder, by the key's hash (revoked keys included: the caller tells them apart). */
  async byApiKeyHash(keyHash: string): Promise<IdentityRow | null> {
    const rows = await this.db.$queryRaw<Row[]>`SELECT ${USER_COLUMNS}, k.id::text AS key_id, k.revoked_at IS NOT NULL AS key_revoked
      FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ${keyHash}`;
    return identity(rows[0]);
  }

  /** A name PostgreSQL text cannot hold (NUL) belongs to no user: no query, and never a 500. */
  async byUsername(username: string): Promise<IdentityRow | null> {
    if (!isStorableText(username)) return null;
    const rows = await this.db.$queryRaw<Row[]>`SELECT ${USER_COLUMNS}, NULL::text AS key_id, false AS key_revoked
      FROM users u WHERE u.username = ${username}`;
    return identity(rows[0]);
  }

  async byUserId(userId: string): Promise<IdentityRow | null> {
    if (!isUuid(userId)) return null;
    const rows = await this.db.$queryRaw<Row[]>`SELECT ${USER_COLUMNS}, NULL::text AS key_id, false AS key_revoked
      FROM users u WHERE u.id = ${userId}::uuid`;
    return identity(rows[0]);
  }
}
