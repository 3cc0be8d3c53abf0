import { createHmac } from "node:crypto";
import { badInput } from "../errors.ts";
import { safeEqual } from "../auth/secrets.ts";
import type { Params } from "./case.filters.ts";

/**
 * The opaque `cursor` of `next` links: the whole query (filters, limit, field selection) and the
 * last (indexed_on, case_id) seen, signed so that a tampered cursor is refused rather than obeyed.
 */
export interface CursorState {
  params: Params;
  after: { indexedOn: string; caseId: string };
}

export class CursorCodec {
  constructor(private readonly key: string) {}

  private sign(body: string): string {
    return createHmac("sha256", this.key).update(body).digest("base64url").slice(0, 22);
  }

  encode(state: CursorState): string {
    const body = Buffer.from(JSON.stringify([state.params, state.after.indexedOn, state.after.caseId])).toString("base64url");
    return `${body}.${this.sign(body)}`;
  }

  decode(token: string): CursorState {
    const invalid = () => badInput(`'${token}' is not a valid cursor.`);
    const dot = token.lastIndexOf(".");
    if (dot < 0) throw invalid();
    const body = token.slice(0, dot);
    if (!safeEqual(this.sign(body), token.slice(dot + 1))) throw invalid();
    try {
      const [params, indexedOn, caseId] = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
      return { params, after: { indexedOn, caseId } };
    } catch {
      throw invalid();
    }
  }
}
