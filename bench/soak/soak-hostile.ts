/**
 * The hostile mix of `npm run soak` (issue #12): while the legitimate load runs, a few attackers
 * send the shapes that once took the server down or leaked, one after another:
 *   - fan-out: the review's nested `children { parent { children … } }` query over a case with 300
 *     children, and `casesByIds` with 5,000 copies of that case and its children;
 *   - deep JSON: a case property nested 6,000 levels deep;
 *   - bad logins: Basic with unknown usernames and wrong passwords (scrypt on every attempt until
 *     the failed-login throttle answers 429);
 *   - aborted uploads: a multipart body announced at 10 MB, cut after 200 KB, to both REST upload
 *     endpoints.
 * Each of them must be refused with a 4xx (never a 5xx, never a GraphQL internal error), and none
 * may leave anything behind: the server's temporary directory must be empty once they stop.
 */
import { readdir } from "node:fs/promises";
import net from "node:net";
import path from "node:path";

export type HostileKind = "fan-out" | "ids-bomb" | "deep-json" | "bad-login" | "aborted-upload";

export interface HostileTarget {
  url: string;
  domain: string;
  /** `ApiKey …` of a member with edit_data (the legitimate load's user) */
  dataAuth: string;
  /** `ApiKey …` of a member with edit_apps */
  appsAuth: string;
  dataDir: string;
}

export interface HostileReport {
  sent: Record<HostileKind, number>;
  /** `kind status` → count, e.g. `fan-out 400` */
  answers: Record<string, number>;
  /** hostile requests answered 5xx or with a GraphQL internal error: each is a bug */
  failures: string[];
}

async function post(url: string, auth: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: auth },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
}

async function must(res: Response, what: string): Promise<any> {
  const body: any = await res.json();
  if (!res.ok || body.errors) throw new Error(`${what}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** A hub case with 300 children (the review's set-up for F1), and an app to upload to. */
export async function prepareHostile(target: HostileTarget): Promise<{ hubId: string; appId: string }> {
  const casesUrl = `${target.url}/a/${target.domain}/api/case/v2/`;
  const hub = await must(await post(casesUrl, target.dataAuth, { case_type: "hub", case_name: "hub", owner_id: "soak" }), "hub case");
  const hubId: string = hub.case.case_id;
  for (let batch = 0; batch < 3; batch++) {
    const children = Array.from({ length: 100 }, (_, i) => ({
      create: true,
      case_type: "spoke",
      case_name: `spoke ${batch * 100 + i}`,
      owner_id: "soak",
      indices: { parent: { case_id: hubId, case_type: "hub", relationship: "child" } },
    }));
    await must(await post(casesUrl, target.dataAuth, children), "children of the hub");
  }
  const form = new FormData();
  form.set("app_file", new Blob([JSON.stringify({ doc_type: "Application", name: "soak", modules: [] })]), "app.json");
  form.set("app_name", "Soak");
  const imported = await fetch(`${target.url}/a/${target.domain}/apps/api/import_app/`, {
    method: "POST",
    headers: { Authorization: target.appsAuth },
    body: form,
  });
  const app = await must(imported, "app import");
  return { hubId, appId: app.app_id };
}

/** A case body whose property is a list nested `depth` deep, written by hand: JSON.stringify itself recurses. */
function deeplyNestedCase(depth: number): string {
  return `{"case_type":"t","case_name":"deep","owner_id":"soak","properties":{"a":${"[".repeat(depth)}"x"${"]".repeat(depth)}}}`;
}

/** Announces a 10 MB multipart body, sends 200 KB of it, and hangs up. */
async function abortedUpload(target: HostileTarget, pathname: string, field: string): Promise<void> {
  const { hostname, port } = new URL(target.url);
  const boundary = "soakboundary";
  const head =
    `POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: ${target.appsAuth}\r\n` +
    `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 10000000\r\n\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="a.zip"\r\nContent-Type: application/zip\r\n\r\n`;
  await new Promise<void>((resolve) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(head);
      socket.write(Buffer.alloc(200 * 1024, 7), () => setTimeout(() => socket.destroy(), 50));
    });
    socket.on("error", () => resolve());
    socket.on("close", () => resolve());
  });
}

/**
 * Runs the attackers until `signal` aborts. Each attacker sends one request at a time; the kinds
 * take turns.
 */
export async function runHostile(
  target: HostileTarget,
  prepared: { hubId: string; appId: string },
  signal: AbortSignal,
  attackers = 2,
): Promise<HostileReport> {
  const report: HostileReport = {
    sent: { "fan-out": 0, "ids-bomb": 0, "deep-json": 0, "bad-login": 0, "aborted-upload": 0 },
    answers: {},
    failures: [],
  };
  const kinds = Object.keys(report.sent) as HostileKind[];
  const graphql = `${target.url}/graphql`;
  const casesUrl = `${target.url}/a/${target.domain}/api/case/v2/`;
  const fanOut = `{ case(domain: "${target.domain}", caseId: "${prepared.hubId}") { children { parent { children { parent { children { caseId } } } } } } }`;
  const idsBomb = {
    query: "query ($d: String!, $ids: [String!]) { casesByIds(domain: $d, caseIds: $ids) { entries { case { children { caseId } } } } }",
    variables: { d: target.domain, ids: Array.from({ length: 5000 }, () => prepared.hubId) },
  };
  const deepJson = deeplyNestedCase(6000);

  const send = async (kind: HostileKind): Promise<void> => {
    report.sent[kind] += 1;
    let res: Response | undefined;
    switch (kind) {
      case "fan-out":
        res = await post(graphql, target.dataAuth, { query: fanOut });
        break;
      case "ids-bomb":
        res = await post(graphql, target.dataAuth, idsBomb);
        break;
      case "deep-json":
        res = await post(casesUrl, target.dataAuth, deepJson);
        break;
      case "bad-login": {
        const guess = Buffer.from(`guess-${report.sent[kind] % 50}:wrong-${report.sent[kind]}`).toString("base64");
        res = await fetch(casesUrl, { headers: { Authorization: `Basic ${guess}` }, signal: AbortSignal.timeout(60_000) });
        break;
      }
      case "aborted-upload": {
        const even = report.sent[kind] % 2 === 0;
        const where = even ? `/a/${target.domain}/apps/api/${prepared.appId}/multimedia/` : `/a/${target.domain}/apps/api/import_app/`;
        await abortedUpload(target, where, even ? "bulk_upload_file" : "app_file");
        return;
      }
    }
    const text = await res.text();
    const key = `${kind} ${res.status}`;
    report.answers[key] = (report.answers[key] ?? 0) + 1;
    const internal = text.includes('"INTERNAL_SERVER_ERROR"');
    if ((res.status >= 500 || internal || res.ok) && report.failures.length < 20) {
      // a hostile request is never served: refused with a 4xx, or a GraphQL error that names the limit
      const refusedInGraphQL = res.ok && text.includes('"errors"') && !internal;
      if (!refusedInGraphQL) report.failures.push(`${key}: ${text.slice(0, 200)}`);
    }
  };

  const attacker = async (offset: number) => {
    for (let turn = offset; !signal.aborted; turn++) {
      await send(kinds[turn % kinds.length]!).catch((error: Error) => {
        if (!signal.aborted && report.failures.length < 20) report.failures.push(`${kinds[turn % kinds.length]}: ${error.message}`);
      });
    }
  };
  await Promise.all(Array.from({ length: attackers }, (_, i) => attacker(i * 2)));
  return report;
}

/** What an aborted upload (or a job) left in the server's temporary directory, after a short grace. */
export async function leftBehind(dataDir: string, graceMs = 5000): Promise<string[]> {
  const tmp = path.join(dataDir, "tmp");
  const deadline = Date.now() + graceMs;
  for (;;) {
    const entries = await readdir(tmp).catch(() => [] as string[]);
    if (entries.length === 0 || Date.now() > deadline) return entries;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
