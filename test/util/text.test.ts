import { describe, expect, it } from "vitest";
import { isStorableText, unstorableReason, wellFormed } from "../../src/util/text.ts";

/** What PostgreSQL text and jsonb can hold: the one predicate every feature words its messages from. */

describe("unstorableReason", () => {
  it.each([
    ["", undefined],
    ["plain", undefined],
    ["a pair \ud83d\ude00 is one character", undefined],
    ["\ufffd", undefined],
    ["a\u0000b", "nul"],
    ["a\ud800b", "surrogate"],
    ["\ude00", "surrogate"],
    ["\ude00\ud83d", "surrogate"],
  ] as const)("%j: %s", (text, reason) => {
    expect(unstorableReason(text)).toBe(reason);
    expect(isStorableText(text)).toBe(reason === undefined);
  });

  it("names the NUL character first when a text has both a NUL and an unpaired surrogate", () => {
    expect(unstorableReason("\ud800\u0000")).toBe("nul");
    expect(unstorableReason("\u0000\ud800")).toBe("nul");
  });

  it("wellFormed replaces each unpaired surrogate, and leaves pairs and NUL alone", () => {
    expect(wellFormed("a\ud800\ud83d\ude00\ude00\u0000")).toBe("a\ufffd\ud83d\ude00\ufffd\u0000");
  });
});
