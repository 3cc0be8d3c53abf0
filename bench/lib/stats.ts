/** Timing and number formatting shared by every part. */

export const clock = () => performance.now();

/** Wall-clock milliseconds comparable across processes of this machine. */
export const wallClock = () => performance.timeOrigin + performance.now();

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export const median = (values: number[]) => percentile(values, 50);

/** items per second */
export const rate = (items: number, ms: number) => (items / ms) * 1000;

export const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en") : "—");
export const ms = (n: number) => (Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : Math.round(n).toLocaleString("en")) : "—");
export const ratio = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : "—");

/** Runs `fn` with `concurrency` workers pulling indices 0..count-1. */
export async function inParallel(count: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let i = next++; i < count; i = next++) await fn(i);
    }),
  );
}
