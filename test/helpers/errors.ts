/** What a DomainError says, for tests that pin a rule by its code, status and exact message. */
import { expect } from "vitest";
import { DomainError, type ErrorCode } from "../../src/errors.ts";

/** The message of the BAD_USER_INPUT DomainError a call throws (fails the test when it does not throw one). */
export function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe("BAD_USER_INPUT");
    return (error as DomainError).message;
  }
  throw new Error("expected a DomainError");
}

/** A DomainError as a scenario expects it. */
export interface Refusal {
  code: ErrorCode;
  status: number;
  message: string;
}

export const badInput = (message: string): Refusal => ({ code: "BAD_USER_INPUT", status: 400, message });
export const forbidden = (message: string): Refusal => ({ code: "FORBIDDEN", status: 403, message });
export const notFound = (message: string): Refusal => ({ code: "NOT_FOUND", status: 404, message });

/** The DomainError `work` rejects with, as {code, status, message} (fails the test when it resolves or throws another error). */
export async function rejection(work: Promise<unknown> | (() => Promise<unknown>)): Promise<Refusal> {
  try {
    await (typeof work === "function" ? work() : work);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { code: error.code, status: error.status, message: error.message };
  }
  throw new Error("expected a DomainError");
}
