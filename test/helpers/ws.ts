import { createClient, type Client } from "graphql-ws";
import type { FormattedExecutionResult, GraphQLFormattedError } from "graphql";
import { WebSocket } from "ws";
import type { TestApp } from "./app.ts";

/**
 * A graphql-ws client on the app's /graphql for WebSocket tests: connected eagerly, never retrying,
 * and recording the close codes it sees.
 */
export interface WsTestClient {
  client: Client;
  /** close codes received, in order */
  closes: number[];
  /** runs one query or mutation: its result, or `{ closed: code }` when the socket closed instead */
  run(query: string, variables?: Record<string, unknown>): Promise<OperationOutcome>;
  /** starts a subscription whose events and errors are collected */
  subscribe(query: string): LiveSubscription;
  /** resolves with the next close code not yet handed out */
  closed(timeoutMs?: number): Promise<number>;
  dispose(): Promise<void>;
}

export type OperationOutcome = FormattedExecutionResult<Record<string, unknown>> | { closed: number } | { refused: GraphQLFormattedError[] };

export interface LiveSubscription {
  events: Record<string, unknown>[];
  errors: GraphQLFormattedError[];
  /** set when the server completed it or the socket ended it */
  ended: boolean;
  /** completes it from the client */
  stop(): void;
}

export async function wsUrl(app: TestApp): Promise<string> {
  const address = app.server.httpServer.address();
  const base = address && typeof address === "object" ? `http://127.0.0.1:${address.port}` : await app.server.listen(0, "127.0.0.1");
  return `${base.replace("http", "ws")}/graphql`;
}

function isCloseEvent(value: unknown): value is { code: number } {
  return typeof value === "object" && value !== null && typeof (value as { code?: unknown }).code === "number";
}

export async function connectWs(app: TestApp, authorization: string): Promise<WsTestClient> {
  const closes: number[] = [];
  const waiters: ((code: number) => void)[] = [];
  /** how many of `closes` closed() has handed out */
  let seen = 0;
  const client = createClient({
    url: await wsUrl(app),
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: authorization },
    retryAttempts: 0,
    lazy: false,
    // closes are what the tests look at (`closes`, `closed()`): not console noise
    onNonLazyError: () => {},
    on: {
      closed: (event) => {
        const code = isCloseEvent(event) ? event.code : -1;
        closes.push(code);
        for (const resolve of waiters.splice(0)) resolve(code);
      },
    },
  });
  await new Promise<void>((resolve, reject) => {
    const off = client.on("connected", () => (off(), resolve()));
    const offClosed = client.on("closed", (event) => (offClosed(), reject(new Error(`closed ${isCloseEvent(event) ? event.code : event}`))));
  });

  return {
    client,
    closes,
    async run(query, variables) {
      try {
        const events = client.iterate<Record<string, unknown>>({ query, variables });
        const { value } = await events.next();
        await events.return?.();
        return value as FormattedExecutionResult<Record<string, unknown>>;
      } catch (error) {
        if (isCloseEvent(error)) return { closed: error.code };
        if (Array.isArray(error)) return { refused: error as GraphQLFormattedError[] };
        throw error;
      }
    },
    subscribe(query) {
      const live: LiveSubscription = { events: [], errors: [], ended: false, stop: () => {} };
      live.stop = client.subscribe<Record<string, unknown>>(
        { query },
        {
          next: (result) => {
            if (result.data) live.events.push(result.data);
            if (result.errors) live.errors.push(...result.errors);
          },
          error: (error) => {
            if (Array.isArray(error)) live.errors.push(...(error as GraphQLFormattedError[]));
            live.ended = true;
          },
          complete: () => void (live.ended = true),
        },
      );
      return live;
    },
    closed(timeoutMs = 5000) {
      if (closes.length > seen) return Promise.resolve(closes[seen++]!);
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no close within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((code) => (clearTimeout(timer), seen++, resolve(code)));
      });
    },
    dispose: () => client.dispose() as Promise<void>,
  };
}

/** Waits until `done()` holds, calling `poke()` between looks (e.g. a write that live subscriptions will see). */
export async function until(done: () => boolean, poke: () => Promise<unknown> = async () => {}, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await poke();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
