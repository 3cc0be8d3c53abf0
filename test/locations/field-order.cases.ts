/**
 * Bodies with two mistakes, each in a different field, and the one answered: every field is checked
 * whole (its JSON type, then its value rules) before the next, in the API's field order (name,
 * location_type_code, site_code, latitude, longitude, parent_location_id, location_data), so the
 * first field's mistake wins whether it is one of type or of value. Shared by the create, update and
 * bulk tests.
 */
export const TWO_MISTAKES: { body: Record<string, unknown>; error: string }[] = [
  { body: { name: "a\u0000", location_type_code: 5 }, error: "'name' cannot contain the NUL character." },
  { body: { name: "x".repeat(300), location_type_code: "country", latitude: true }, error: "'name' cannot be longer than 255 characters." },
  {
    body: { name: "A", location_type_code: "country", latitude: "abc", parent_location_id: 5 },
    error: "'latitude' must be a decimal number, received 'abc'",
  },
  {
    body: { name: "A", location_type_code: "country", longitude: "12345678901", location_data: "x" },
    error: "'longitude' must have at most 10 digits before and 10 after the decimal point",
  },
  {
    body: { name: "A", location_type_code: "country", parent_location_id: "p\u0000", location_data: [] },
    error: "'parent_location_id' cannot contain the NUL character.",
  },
  { body: { name: "\ud800", location_type_code: "country", location_data: "x" }, error: "'name' cannot contain an unpaired surrogate." },
  // and the other way round: an earlier field's type before a later field's value
  { body: { name: 5, location_type_code: "a\u0000" }, error: "'name' must be a string, received '5'" },
  {
    body: { name: "A", location_type_code: "country", site_code: ["s"], latitude: "1".repeat(11) },
    error: "'site_code' must be a string, received '['s']'",
  },
];
