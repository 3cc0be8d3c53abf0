// The dashboard's only road to the server: the public GraphQL API on /graphql, over HTTP (queries,
// the multipart upload) and over WebSocket (graphql-transport-ws, the live feed).
// "graphql-ws" is mapped to the package's browser client by the page's import map
import { createClient } from "graphql-ws";

const ENDPOINT = new URL("/graphql", location.href);

/** What an HTTP status or GraphQL error code means, in words a person can act on. */
const STATUS_WORDS = {
  400: "The server refused the request",
  401: "Not signed in: the username, API key or password was not accepted",
  403: "Not allowed: your account does not have the permission for this domain or action",
  404: "Not found",
  413: "Too large: the file is bigger than the server accepts",
  429: "Too many requests: wait a moment, then try again",
  503: "The server is not available right now: try again shortly",
  507: "The server is out of disk space: try again later",
};
const CODE_STATUS = {
  BAD_USER_INPUT: 400,
  BAD_REQUEST: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  SERVICE_UNAVAILABLE: 503,
  INSUFFICIENT_STORAGE: 507,
};
/** graphql-ws close codes this server uses when it refuses a socket's credential */
const REFUSED_CLOSE = { 4401: 401, 4403: 403, 4430: 429 };

export class ApiError extends Error {
  /** @param {number} status  @param {string} [detail] the server's own message */
  constructor(status, detail) {
    const words = STATUS_WORDS[status] ?? (status >= 500 ? "The server failed" : "The request failed");
    const extra = detail && detail !== words ? `: ${detail}` : "";
    super(`${words} (${status})${extra}`);
    this.status = status;
  }
}

/** The error a GraphQL response (HTTP status and body) carries, if any. */
function responseError(status, body) {
  const first = body?.errors?.[0];
  if (!first) return status >= 400 ? new ApiError(status) : null;
  const code = first.extensions?.code;
  return new ApiError(CODE_STATUS[code] ?? (status >= 400 ? status : 400), first.message);
}

async function readJson(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

/**
 * Sends one operation; resolves to its `data`, or rejects with an ApiError. `credentials: "omit"`
 * keeps the browser from showing its own sign-in prompt on a 401 challenge: the credential goes
 * in the Authorization header only.
 */
export async function request(authorization, query, variables = {}) {
  let response;
  try {
    response = await fetch(ENDPOINT, {
      method: "POST",
      credentials: "omit",
      headers: { "content-type": "application/json", authorization },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new Error("Cannot reach the server: check the connection and try again.");
  }
  const body = await readJson(response);
  const error = responseError(response.status, body);
  if (error) throw error;
  return body.data;
}

/**
 * Uploads a file as the GraphQL multipart request spec says (operations, map, then the file).
 * XMLHttpRequest rather than fetch, for the upload's own progress. Apollo's CSRF prevention wants
 * a preflight header on multipart requests.
 */
export function upload(authorization, query, variables, file, onProgress) {
  const form = new FormData();
  form.append("operations", JSON.stringify({ query, variables: { ...variables, file: null } }));
  form.append("map", JSON.stringify({ 0: ["variables.file"] }));
  form.append("0", file, file.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", ENDPOINT);
    xhr.withCredentials = false;
    xhr.setRequestHeader("authorization", authorization);
    xhr.setRequestHeader("apollo-require-preflight", "true");
    xhr.responseType = "json";
    xhr.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded, event.total);
    xhr.onerror = () => reject(new Error("Cannot reach the server: the upload did not go through."));
    xhr.onload = () => {
      const error = responseError(xhr.status, xhr.response);
      if (error) reject(error);
      else resolve(xhr.response.data);
    };
    xhr.send(form);
  });
}

/** Waits 1, 2, 4 … up to 30 seconds between reconnections, forever: the feed is meant to stay up. */
async function backOff(retries) {
  await new Promise((resolve) => setTimeout(resolve, Math.min(2 ** retries, 30) * 1000));
}

/**
 * A live feed over graphql-transport-ws, signed in with the `connection_init` payload. `onState`
 * hears "connecting", "live" (with whether it is a reconnection, after which missed events must be
 * read again) and "refused" (with an ApiError; not retried).
 */
export function openFeed(authorization, onState) {
  const wsUrl = new URL(ENDPOINT);
  wsUrl.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const refusal = (event) => (event && REFUSED_CLOSE[event.code] ? new ApiError(REFUSED_CLOSE[event.code], event.reason) : null);
  return createClient({
    url: wsUrl.href,
    connectionParams: { Authorization: authorization },
    retryAttempts: Number.POSITIVE_INFINITY,
    retryWait: backOff,
    shouldRetry: (event) => !refusal(event),
    on: {
      connecting: () => onState("connecting"),
      connected: (_socket, _payload, wasRetry) => onState("live", wasRetry),
      closed: (event) => {
        const refused = refusal(event);
        onState(refused ? "refused" : "connecting", refused);
      },
    },
  });
}

/**
 * Subscribes `client` to `query`; `onData` gets each result's data, `onError` an Error in words.
 * Returns the unsubscribe function.
 */
export function subscribe(client, query, variables, onData, onError) {
  return client.subscribe(
    { query, variables },
    {
      next: (result) => (result.errors?.length ? onError(responseError(200, result)) : onData(result.data)),
      error: (error) => {
        if (Array.isArray(error)) onError(responseError(200, { errors: error }));
        else if (error instanceof Error) onError(error);
        else onError(new Error(`The live feed closed (${error?.code ?? "unknown"}${error?.reason ? `: ${error.reason}` : ""}).`));
      },
      complete: () => {},
    },
  );
}
