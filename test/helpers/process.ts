import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

/** The real server as a child process, for start, signal and restart tests. */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** sends the signal and resolves with the exit code */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const ROOT = path.resolve(import.meta.dirname, "../..");

export async function startServer(env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", LOG_LEVEL: "error", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${output}`)), timeoutMs);
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before starting:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    async stop(signal = "SIGTERM") {
      child.kill(signal);
      return exited;
    },
  };
}
