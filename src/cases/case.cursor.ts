import { createHmac } from "node:crypto";
import { badInput } from "../errors.ts";
import { safeEqual } from "../auth/secrets.ts";
import type { FieldSelection } from "./case.fields.ts";
import type { CaseQuery, Keyset } from "./case.query.ts";

/**
 * The opaque cursor of REST's case list (`next` links, CONTRACT §2): the whole typed query, the
 * field selection when one was made, and the last (indexed_on, case_id) seen, signed so that a
 * tampered cursor is refused rather than obeyed. GraphQL's connection has its own per-edge cursors
 * (src/graphql/connection.ts), which hold a position and a filter fingerprint, never the query.
 */
export interface CursorState {
  query: CaseQuery;
  /** REST `fields`/`exclude`, kept across pages */
  selection?: FieldSelection;
  after: Keyset;
}

/** The layout of the signed body; a cursor of another layout (an older release's) is refused as invalid. */
const VERSION = 2;

export class CursorCodec {
  constructor(private readonly key: string) {}

  private sign(body: string): string {
    return createHmac("sha256", this.key).update(body).digest("base64url").slice(0, 22);
  }

  encode(state: CursorState): string {
    const { query, after } = state;
    const selection = state.selection?.mode === "all" ? undefined : state.selection;
    const json = { v: VERSION, query: { ...query, properties: [...query.properties], indices: [...query.indices] }, selection, after };
    const body = Buffer.from(JSON.stringify(json)).toString("base64url");
    return `${body}.${this.sign(body)}`;
  }

  decode(token: string): CursorState {
    const invalid = () => badInput(`'${token}' is not a valid cursor.`);
    const dot = token.lastIndexOf(".");
    if (dot < 0) throw invalid();
    const body = token.slice(0, dot);
    if (!safeEqual(this.sign(body), token.slice(dot + 1))) throw invalid();
    try {
      const { v, query, selection, after } = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
      if (v !== VERSION) throw invalid();
      return { query: { ...query, properties: new Map(query.properties), indices: new Map(query.indices) }, selection, after };
    } catch {
      throw invalid();
    }
  }
}
