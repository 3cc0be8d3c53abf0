/**
 * A small request/response channel over a forked child's IPC: the parent calls named operations,
 * the child answers them. Servers under test live in their own processes, so the load generator
 * (this process) never shares an event loop with what it measures.
 */
import { fork, type ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";

type Message =
  | { type: "ready"; value: unknown }
  | { type: "result"; id: number; value: unknown }
  | { type: "error"; id: number; message: string }
  | { type: "event"; value: unknown };

export interface Child<Ready> {
  ready: Ready;
  process: ChildProcess;
  call<T = unknown>(op: string, ...args: unknown[]): Promise<T>;
  /** messages the child sends on its own (not answers) */
  onEvent(listener: (value: any) => void): void;
  stop(): Promise<void>;
}

/** Forks a TypeScript entry (run through tsx) and waits for its `ready` message. */
export async function spawnChild<Ready>(
  file: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; execArgv?: string[]; stderr?: "inherit" | "pipe" | Writable } = {},
): Promise<Child<Ready>> {
  const child = fork(file, args, {
    // BENCH_CPU_PROF=DIR: every child writes a V8 CPU profile there (see bench/tools/cpuprofile-top.ts)
    execArgv: [
      "--import",
      "tsx",
      "--max-old-space-size=2048",
      ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      ...(options.execArgv ?? []),
    ],
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "inherit", options.stderr ?? "inherit", "ipc"],
    serialization: "advanced",
  });
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  const listeners: ((value: unknown) => void)[] = [];
  let nextId = 1;
  let exited = false;
  const ready = new Promise<Ready>((resolve, reject) => {
    child.on("message", (message: Message) => {
      if (message.type === "ready") resolve(message.value as Ready);
      else if (message.type === "event") for (const l of listeners) l(message.value);
      else {
        const p = pending.get(message.id);
        pending.delete(message.id);
        if (message.type === "result") p?.resolve(message.value);
        else p?.reject(new Error(`${path(file)}: ${message.message}`));
      }
    });
    child.on("exit", (code) => {
      exited = true;
      const error = new Error(`${path(file)} exited with code ${code}`);
      reject(error);
      for (const p of pending.values()) p.reject(error);
      pending.clear();
    });
  });
  return {
    ready: await ready,
    process: child,
    call(op, ...args) {
      if (exited) return Promise.reject(new Error(`${path(file)} has exited`));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ type: "call", id, op, args });
      });
    },
    onEvent(listener) {
      listeners.push(listener);
    },
    async stop() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.send({ type: "call", id: 0, op: "stop", args: [] });
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

const path = (file: string) => file.split("/").slice(-2).join("/");

/** The child side: announce readiness, then answer calls until `stop`. */
export function serveCalls(ready: unknown, handlers: Record<string, (...args: any[]) => unknown>, onStop: () => Promise<void>): void {
  process.on("message", async (message: { type: string; id: number; op: string; args: unknown[] }) => {
    if (message.type !== "call") return;
    if (message.op === "stop") {
      await onStop().catch(() => {});
      process.exit(0);
    }
    try {
      const handler = handlers[message.op];
      if (!handler) throw new Error(`unknown operation ${message.op}`);
      const value = await handler(...message.args);
      process.send!({ type: "result", id: message.id, value });
    } catch (error) {
      process.send!({ type: "error", id: message.id, message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  });
  process.send!({ type: "ready", value: ready });
  // the parent going away ends the child
  process.on("disconnect", () => process.exit(0));
}

/** A message from the child that is not an answer (progress, measurements). */
export function sendEvent(value: unknown): void {
  process.send!({ type: "event", value });
}
