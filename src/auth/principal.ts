/** Who is calling, once credentials have been checked. */
export interface Principal {
  userId: string;
  username: string;
  isSuperuser: boolean;
  scheme: "apikey" | "basic" | "digest" | "bearer";
  /**
   * Which credential admitted the caller, so that a long-lived connection can re-check it cheaply
   * (no password hashing) by its id. Absent on principals the process makes for itself.
   */
  credential?: CredentialRef;
  /**
   * The user's memberships by domain name, as found when this request was authenticated, so that
   * the domain check (authorize) needs no query. Absent on a principal that outlives its request
   * (a WebSocket's) and on those the process makes for itself: authorize then asks the database.
   */
  memberships?: ReadonlyMap<string, DomainGrant>;
}

/** A domain the user is a member of, and the permissions held there (sorted). */
export interface DomainGrant {
  id: string;
  name: string;
  permissions: readonly string[];
}

/**
 * An API key by its row; an OAuth access token by its row and expiry; an OpenID Connect access
 * token (a JWT of OIDC_ISSUER, kept nowhere) by its expiry; a password (Basic, Digest) by a
 * fingerprint of the stored hash, which changes whenever the password is set.
 */
export type CredentialRef =
  | { kind: "apikey"; keyId: string }
  | { kind: "oauth"; tokenId: string; expiresAt: Date }
  | { kind: "oidc"; expiresAt: Date }
  | { kind: "password"; fingerprint: string };

/** The permission names of CONTRACT §1, as stored on memberships and given to createUser. */
export const PERMISSIONS = ["access_api", "view_data", "edit_data", "view_locations", "edit_locations", "edit_apps"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}
