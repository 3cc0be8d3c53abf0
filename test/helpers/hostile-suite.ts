/**
 * The set-up the hostile-input property files share (test/properties/): one app for the file, with
 * the rate limit off, listening on a port; raw requests as one user, each status tallied under the
 * property that sent it; and the write check, that a refused request changes no table.
 */
import { expect } from "vitest";
import { build, type TestApp, type TestUser } from "./app.ts";
import { changedTables, snapshot, StatusTally } from "./invariants.ts";
import { NO_RATE_LIMIT, rawRequest, type RawResponse } from "./raw-http.ts";

export class HostileSuite {
  app!: TestApp;
  /** `http://host:port` of the listening app */
  base!: string;
  /** the user every request of `send` is sent as */
  user!: TestUser;
  readonly tally = new StatusTally();
  /** the property running now, for the tally */
  current = "setup";

  /** `prefix`: the path every `send` is relative to */
  constructor(private readonly prefix: string) {}

  /** Builds the app, lets `arrange` seed it and return the user to send as, and listens. */
  async start(arrange: (app: TestApp) => Promise<TestUser>): Promise<void> {
    this.app = await build(NO_RATE_LIMIT);
    this.user = await arrange(this.app);
    this.base = await this.app.server.listen(0, "127.0.0.1");
  }

  async close(): Promise<void> {
    await this.app?.close();
  }

  /** A request as the user to `prefix + path`, tallied under the current property. */
  async send(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<RawResponse> {
    const res = await rawRequest(this.base, {
      method,
      path: `${this.prefix}${path}`,
      headers: { Authorization: this.user.authorization, ...headers },
      body,
    });
    this.tally.add(this.current, res.status);
    return res;
  }

  /** Sends a write, checks its answer with `bad` (undefined: fine) and, when refused, that no table changed. */
  async checkWrite(label: string, write: () => Promise<RawResponse>, bad: (res: RawResponse) => string | undefined): Promise<RawResponse> {
    const before = await snapshot(this.app.db);
    const res = await write();
    expect(bad(res), label).toBeUndefined();
    if (res.status >= 400) expect(changedTables(before, await snapshot(this.app.db)), `refused ${label} changed tables`).toEqual([]);
    return res;
  }
}
