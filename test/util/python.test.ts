import { describe, expect, it } from "vitest";
import { MAX_ECHO_LENGTH, pythonStr } from "../../src/util/python.ts";

/** How messages echo a rejected value: Python's str/repr, without recursion, cut at MAX_ECHO_LENGTH. */

describe("pythonStr", () => {
  it("prints ordinary values as Python does", () => {
    expect(pythonStr(null)).toBe("None");
    expect(pythonStr(true)).toBe("True");
    expect(pythonStr(1.5)).toBe("1.5");
    expect(pythonStr("plain")).toBe("plain");
    expect(pythonStr([])).toBe("[]");
    expect(pythonStr({})).toBe("{}");
    expect(pythonStr(["c", 1, null, false, { "k'": ["a\\b"] }])).toBe("['c', 1, None, False, {'k\\'': ['a\\\\b']}]");
  });

  it("F8: a value nested 1,000,000 levels deep is printed without recursion, cut at MAX_ECHO_LENGTH with …", () => {
    let deep: unknown = [];
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(pythonStr(deep)).toBe(`${"[".repeat(MAX_ECHO_LENGTH)}…`);
    let object: unknown = 1;
    for (let i = 0; i < 100_000; i++) object = { a: object };
    expect(pythonStr(object)).toBe(`${"{'a': ".repeat(200).slice(0, MAX_ECHO_LENGTH)}…`);
  });

  it("F8: long strings and wide values are cut too, never inside a surrogate pair", () => {
    expect(pythonStr("x".repeat(5000))).toBe(`${"x".repeat(MAX_ECHO_LENGTH)}…`);
    expect(pythonStr("😀".repeat(5000))).toBe(`${"😀".repeat(MAX_ECHO_LENGTH / 2)}…`);
    expect(pythonStr(`a${"😀".repeat(5000)}`)).toBe(`a${"😀".repeat(MAX_ECHO_LENGTH / 2 - 1)}…`);
    expect(pythonStr(Array.from({ length: 100_000 }, () => 1))).toBe(`[${"1, ".repeat(400).slice(0, MAX_ECHO_LENGTH - 1)}…`);
    expect(pythonStr("x".repeat(MAX_ECHO_LENGTH))).toBe("x".repeat(MAX_ECHO_LENGTH));
  });
});
