import { expect } from "vitest";
import { DomainError } from "../../src/errors.ts";

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
