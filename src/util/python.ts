/** How the original server (Python) prints a value in its messages. */
export function pythonStr(value: unknown): string {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  const repr = (v: unknown): string => {
    if (typeof v === "string") return `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
    if (Array.isArray(v)) return `[${v.map(repr).join(", ")}]`;
    if (v && typeof v === "object")
      return `{${Object.entries(v)
        .map(([k, x]) => `${repr(k)}: ${repr(x)}`)
        .join(", ")}}`;
    return pythonStr(v);
  };
  return repr(value);
}
