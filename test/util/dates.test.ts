import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/errors.ts";
import { caseDate, isoString, naiveDate, parseDateValue, rangeBound } from "../../src/util/dates.ts";

/** CONTRACT §1 "Dates": the wire formats and the parsing of `*.gt/.gte/.lt/.lte` filter values. */

/** The DomainError a call throws (fails the test when it does not throw one). */
function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error("expected a DomainError");
}

describe("Case API dates are YYYY-MM-DDTHH:MM:SS.ffffffZ", () => {
  it("caseDate gives UTC with six fraction digits and a literal Z", () => {
    expect(caseDate(new Date("2024-03-11T19:29:16.845Z"))).toBe("2024-03-11T19:29:16.845000Z");
    expect(caseDate(new Date("2024-03-11T19:29:16Z"))).toBe("2024-03-11T19:29:16.000000Z");
    expect(caseDate(new Date("2024-03-11T23:30:00-05:00"))).toBe("2024-03-12T04:30:00.000000Z");
    expect(caseDate(new Date())).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });
});

describe("isoString writes exactly what toISOString writes", () => {
  const mismatches = (times: number[]) =>
    times
      .map((t) => new Date(t))
      .filter((d) => isoString(d) !== d.toISOString())
      .map((d) => d.getTime());

  it("at the ends of four-digit years, of days, around the epoch and leap days, and outside four-digit years", () => {
    const edges = [
      -62_167_219_200_000, 253_402_300_799_999, -62_135_596_800_001, 951_782_400_000, 951_868_800_000, 1_709_164_800_000, 4_107_542_400_000,
    ];
    const around = edges.flatMap((t) => [t - 86_400_000, t - 1, t, t + 1, t + 86_400_000]);
    expect(mismatches([...around, 0, -1, 1, 86_399_999, -86_400_001, 8.64e15, -8.64e15, -8.64e15 + 1])).toEqual([]);
  });

  it("at 200,000 instants spread over every year PostgreSQL stores and over consecutive days", () => {
    let seed = 7;
    const next = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const spread = Array.from(
      { length: 100_000 },
      () => Math.floor(-210_866_803_200_000 + next() * (9_224_318_016_000_000 + 210_866_803_200_000)) % 8.64e15,
    );
    const consecutive = Array.from({ length: 100_000 }, (_, i) => Date.UTC(2023, 11, 30) + i * 9_973);
    expect(mismatches([...spread, ...consecutive])).toEqual([]);
  });
});

describe("Location API last_modified is ISO 8601 without a timezone suffix", () => {
  it("naiveDate gives UTC with six fraction digits and no suffix", () => {
    expect(naiveDate(new Date("2024-03-11T19:29:16.845Z"))).toBe("2024-03-11T19:29:16.845000");
    expect(naiveDate(new Date())).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/);
  });
});

describe("filter values: a date YYYY-MM-DD covers the whole day", () => {
  it("a date parses to the span from its 00:00 to the next day's 00:00 (UTC)", () => {
    const day = parseDateValue("2024-01-10");
    expect(day.kind).toBe("day");
    if (day.kind !== "day") return;
    expect(Date.parse(day.start)).toBe(Date.parse("2024-01-10T00:00:00Z"));
    expect(Date.parse(day.end)).toBe(Date.parse("2024-01-11T00:00:00Z"));
  });

  it("the span crosses month and year ends and leap days", () => {
    const end = (v: string) => {
      const d = parseDateValue(v);
      return d.kind === "day" ? new Date(d.end).toISOString() : "";
    };
    expect(end("2024-01-31")).toBe("2024-02-01T00:00:00.000Z");
    expect(end("2024-02-28")).toBe("2024-02-29T00:00:00.000Z");
    expect(end("2024-02-29")).toBe("2024-03-01T00:00:00.000Z");
    expect(end("2023-12-31")).toBe("2024-01-01T00:00:00.000Z");
  });

  it("gte D is from 00:00 on D, gt D after the end of D, lt D before 00:00 on D, lte D through the end of D", () => {
    const d = parseDateValue("2024-01-10");
    const at = (b: { at: string }) => Date.parse(b.at);
    const start = Date.parse("2024-01-10T00:00:00Z");
    const end = Date.parse("2024-01-11T00:00:00Z");
    const gte = rangeBound("gte", d);
    expect([gte.op, at(gte)]).toEqual([">=", start]);
    const gt = rangeBound("gt", d);
    expect([gt.op, at(gt)]).toEqual([">=", end]);
    const lt = rangeBound("lt", d);
    expect([lt.op, at(lt)]).toEqual(["<", start]);
    const lte = rangeBound("lte", d);
    expect([lte.op, at(lte)]).toEqual(["<", end]);
  });

  it("the last day a date can name still has an end that PostgreSQL can read (no '+010000' year)", () => {
    const d = parseDateValue("9999-12-31");
    expect(d.kind).toBe("day");
    if (d.kind !== "day") return;
    expect(d.end).not.toMatch(/^[+-]/);
    expect(d.end).toMatch(/^10000-01-01T00:00:00/);
  });

  it("years below 100 are those years, not 19xx", () => {
    const d = parseDateValue("0050-03-01");
    expect(d.kind).toBe("day");
    if (d.kind !== "day") return;
    expect(d.start).toBe("0050-03-01T00:00:00Z");
    expect(d.end).toMatch(/^0050-03-02T00:00:00/);
  });
});

describe("filter values: ISO 8601 datetimes, with or without offset (naive = UTC)", () => {
  const instant = (v: string) => {
    const d = parseDateValue(v);
    expect(d.kind, v).toBe("instant");
    return d.kind === "instant" ? d.at : "";
  };

  it("a naive datetime is UTC", () => {
    expect(instant("2024-01-10T12:30:45")).toBe("2024-01-10T12:30:45.000000Z");
    expect(instant("2024-01-10T12:30")).toBe("2024-01-10T12:30:00.000000Z");
    expect(instant("2024-01-10 12:30:45")).toBe("2024-01-10T12:30:45.000000Z");
  });

  it("Z and numeric offsets, in every ISO spelling, give the instant in UTC", () => {
    expect(instant("2024-01-10T12:30:45Z")).toBe("2024-01-10T12:30:45.000000Z");
    expect(instant("2024-01-10T12:30:45z")).toBe("2024-01-10T12:30:45.000000Z");
    expect(instant("2024-01-10T12:30:45+05:30")).toBe("2024-01-10T07:00:45.000000Z");
    expect(instant("2024-01-10T12:30:45+0530")).toBe("2024-01-10T07:00:45.000000Z");
    expect(instant("2024-01-10T12:30:45-05")).toBe("2024-01-10T17:30:45.000000Z");
  });

  it("F10: offsets from ±16:00 to ±23:59, which PostgreSQL refuses, are converted to UTC in JS", () => {
    expect(instant("2020-01-01T00:00:00-16:00")).toBe("2020-01-01T16:00:00.000000Z");
    expect(instant("2020-01-01T00:00:00-20:00")).toBe("2020-01-01T20:00:00.000000Z");
    expect(instant("2020-01-01T00:00:00+20:00")).toBe("2019-12-31T04:00:00.000000Z");
    expect(instant("2020-01-01T00:00:00.123456+23:59")).toBe("2019-12-31T00:01:00.123456Z");
    expect(instant("2020-01-01T00:00:00-2359")).toBe("2020-01-01T23:59:00.000000Z");
    expect(instant("2024-02-28T23:00:00-23")).toBe("2024-02-29T22:00:00.000000Z");
  });

  it("F10: -00:00 and +00:00 are UTC", () => {
    expect(instant("2024-01-10T12:30:45-00:00")).toBe("2024-01-10T12:30:45.000000Z");
    expect(instant("2024-01-10T12:30:45+00")).toBe("2024-01-10T12:30:45.000000Z");
  });

  it("F10: at the ends of the calendar, the UTC instant is one PostgreSQL reads (a BC year, a five-digit year)", () => {
    expect(instant("0001-01-01T00:00:00+23:59")).toBe("0001-12-31 00:01:00.000000+00 BC");
    expect(instant("0001-01-01T00:00:00+00:01")).toBe("0001-12-31 23:59:00.000000+00 BC");
    expect(instant("0001-01-01T00:00:00-00:01")).toBe("0001-01-01T00:01:00.000000Z");
    expect(instant("9999-12-31T23:59:59.999999-23:59")).toBe("10000-01-01T23:58:59.999999Z");
  });

  it("F10: every offset from -23:59 to +23:59 moves the instant by exactly that much", () => {
    const local = Date.UTC(2024, 5, 15, 12, 0, 0);
    for (let minutes = -(23 * 60 + 59); minutes <= 23 * 60 + 59; minutes++) {
      const abs = Math.abs(minutes);
      const offset = `${minutes < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
      const expected = `${new Date(local - minutes * 60_000).toISOString().slice(0, 19)}.000000Z`;
      expect(instant(`2024-06-15T12:00:00${offset}`), offset).toBe(expected);
    }
  });

  it("fractions of one to six digits are microseconds", () => {
    expect(instant("2024-01-10T12:30:45.5Z")).toBe("2024-01-10T12:30:45.500000Z");
    expect(instant("2024-01-10T12:30:45.123456")).toBe("2024-01-10T12:30:45.123456Z");
    expect(instant("2024-01-10T12:30:45,25+01:00")).toBe("2024-01-10T11:30:45.250000Z");
  });

  it("an instant's bound is the plain comparison", () => {
    const v = parseDateValue("2024-01-10T00:00:00Z");
    expect(rangeBound("gt", v).op).toBe(">");
    expect(rangeBound("gte", v).op).toBe(">=");
    expect(rangeBound("lt", v).op).toBe("<");
    expect(rangeBound("lte", v).op).toBe("<=");
    expect(rangeBound("lte", v).at).toBe("2024-01-10T00:00:00.000000Z");
  });
});

describe("F10: an invalid value, including an offset that is none (+24:00, +23:60), is 400 Cannot parse datetime '<v>'", () => {
  it.each([
    "2020-02-30",
    "2023-02-29",
    "2024-13-01",
    "2024-00-10",
    "2024-01-32",
    "0000-01-01",
    "2024-1-5",
    "20240110",
    "yesterday",
    "",
    " 2024-01-10",
    "2024-01-10T24:00:00",
    "2024-01-10T12:60:00",
    "2024-01-10T12:30:60",
    "2024-01-10T12:30:45.1234567",
    "2024-01-10T12:30:45+24:00",
    "2024-01-10T12:30:45-24:00",
    "2024-01-10T12:30:45+2400",
    "2024-01-10T12:30:45+24",
    "2024-01-10T12:30:45+23:60",
    "2024-01-10T12:30:45+99:99",
    "2024-01-10T12:30:45+5:30",
    "2024-01-10T12:30:45+05:3",
    "2024-01-10T12:30:45+05:",
    "2024-01-10T12:30:45+05:30:00",
    "2024-01-10T12:30:45+05:60",
    "2024-01-10T12:30:45 05:00",
    "2024-02-30T00:00:00",
  ])("%j", (value) => {
    const error = thrown(() => parseDateValue(value));
    expect(error.status).toBe(400);
    expect(error.message).toBe(`Cannot parse datetime '${value}'`);
  });
});
