/** Who is calling, once credentials have been checked. */
export interface Principal {
  userId: string;
  username: string;
  isSuperuser: boolean;
  scheme: "apikey" | "basic" | "digest" | "bearer";
}

/** The permission names of CONTRACT §1, as stored on memberships and given to createUser. */
export const PERMISSIONS = ["access_api", "view_data", "edit_data", "view_locations", "edit_locations", "edit_apps"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}
