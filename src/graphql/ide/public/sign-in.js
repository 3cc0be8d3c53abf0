// The GraphQL IDE's sign-in step (src/graphql/ide/ide.ts): the user signs in, the page checks the
// credential with `{ me }`, then starts Ruru (GraphiQL), whose every request and subscription
// carries it, so that the schema loads for the Docs pane and the first query already works. Until
// then Ruru is not started at all: started without credentials, it would show UNAUTHENTICATED and
// "Error fetching schema".

const config = JSON.parse(document.getElementById("ide-config").textContent);
const ENDPOINT = new URL(config.ruru.endpoint ?? "/graphql", window.location.href).href;
const SUBSCRIPTIONS = new URL(config.ruru.subscriptionEndpoint, window.location.href).href;
/**
 * sessionStorage: an API key stays in this tab only and goes when the tab closes. A password or a
 * token is never stored: it stays in this page's memory, and a reload asks for it again.
 */
const STORAGE_KEY = "graphql-ide.authorization";
const ME = "{ me { username isSuperuser memberships { domain permissions } } }";

const $ = (id) => document.getElementById(id);

/**
 * The credential every call of the IDE carries once signed in, unless the user sets an
 * `Authorization` of their own in the Headers tab. It is added on the way out (below), not put
 * in the Headers tab: GraphiQL keeps its tabs, but not their headers, in localStorage, so a tab
 * kept from an earlier visit would come back without it.
 */
let authorization = null;

/**
 * Every fetch of the page: the IDE's calls to the endpoint get the signed-in credential (so the
 * schema's introspection has it however early it runs), and never credentials the browser keeps
 * for this server: with `credentials: "omit"` a 401 (whose Basic and Digest challenges the
 * contract requires) does not make the browser ask for a password.
 */
const browserFetch = window.fetch.bind(window);
window.fetch = (input, init = {}) => {
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  const url = new URL(input instanceof Request ? input.url : String(input), window.location.href).href;
  if (authorization && url === ENDPOINT && !headers.has("authorization")) headers.set("authorization", authorization);
  return browserFetch(input, { ...init, headers, credentials: "omit" });
};

/** Whether a `connection_init` payload (the headers of a subscription) already names a credential. */
const namesCredential = (payload) => Object.keys(payload ?? {}).some((key) => key.toLowerCase() === "authorization");

/**
 * The IDE's subscriptions (graphql-transport-ws) send the Headers tab's headers as their
 * `connection_init` payload: the signed-in credential joins them there, as it joins the fetches.
 */
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function sendWithCredential(data) {
  if (!authorization || typeof data !== "string" || new URL(this.url).href !== SUBSCRIPTIONS) return send.call(this, data);
  let message;
  try {
    message = JSON.parse(data);
  } catch {
    return send.call(this, data);
  }
  if (message?.type !== "connection_init" || namesCredential(message.payload)) return send.call(this, data);
  return send.call(this, JSON.stringify({ ...message, payload: { ...message.payload, Authorization: authorization } }));
};

function base64(text) {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

/** The form's `Authorization` value, and whether it may stay in the tab's storage (an API key only). */
function credentialFrom(form) {
  const data = new FormData(form);
  const username = String(data.get("username") ?? "").trim();
  // a password is taken as typed (spaces are part of it); a key or a token never has any
  const secret = String(data.get("secret") ?? "");
  switch (data.get("method")) {
    case "password":
      return { authorization: `Basic ${base64(`${username}:${secret}`)}`, storable: false };
    case "token":
      return { authorization: `Bearer ${secret.trim()}`, storable: false };
    default:
      return { authorization: `ApiKey ${username}:${secret.trim()}`, storable: true };
  }
}

/** The signed-in user, or an Error saying in words why the server refused the credential. */
async function whoIs(credential) {
  let response;
  try {
    response = await browserFetch(ENDPOINT, {
      method: "POST",
      credentials: "omit",
      headers: { "content-type": "application/json", authorization: credential },
      body: JSON.stringify({ query: ME }),
    });
  } catch {
    throw new Error("Cannot reach the server: check the connection and try again.");
  }
  const body = await response.json().catch(() => null);
  if (body?.data?.me) return body.data.me;
  throw new Error(body?.errors?.[0]?.message ?? `The server answered ${response.status}.`);
}

/** A first query that works for this user: who they are and, where they may read cases, a few of them. */
function exampleQuery(me) {
  const readsCases = (m) => m.permissions.includes("ACCESS_API") && (m.permissions.includes("VIEW_DATA") || m.permissions.includes("EDIT_DATA"));
  const domain = (me.isSuperuser ? me.memberships[0] : me.memberships.find(readsCases))?.domain;
  // short lines: beside the Docs pane the editor is narrow
  const lines = [
    `# Signed in as ${me.username}.`,
    "# Run: Ctrl-Enter, or ▶.",
    "# Docs: the book icon, top left.",
    "query Example {",
    "  me {",
    "    username",
    "    memberships {",
    "      domain",
    "      permissions",
    "    }",
    "  }",
  ];
  if (domain) {
    lines.push(
      `  cases(domain: ${JSON.stringify(domain)}, first: 5) {`,
      "    totalCount",
      "    nodes {",
      "      caseId",
      "      caseName",
      "    }",
      "  }",
    );
  } else if (me.isSuperuser) {
    lines.push("  domains {", "    name", "  }");
  }
  lines.push("}", "");
  return lines.join("\n");
}

/** Starts Ruru for the signed-in user, the example in the editor (and in every new tab). */
async function openIde(credential, me) {
  authorization = credential;
  $("ide-user").textContent = me.username;
  $("ide-sign-in").hidden = true;
  $("ide-session").hidden = false;
  document.body.classList.add("ide-signed-in");
  const { React, createRoot, Ruru } = await import(`${config.ruru.staticPath}ruru.js`);
  const query = exampleQuery(me);
  createRoot($("ruru-root")).render(React.createElement(Ruru, { ...config.ruru, initialQuery: query, defaultQuery: query }));
}

async function signIn({ authorization: credential, storable }) {
  const me = await whoIs(credential);
  if (storable) sessionStorage.setItem(STORAGE_KEY, credential);
  else sessionStorage.removeItem(STORAGE_KEY);
  // the secret leaves the form: from here on it is the IDE's header only
  $("ide-sign-in-form").reset();
  await openIde(credential, me);
}

function showError(error) {
  $("ide-sign-in-error").textContent = error instanceof Error ? error.message : String(error);
  $("ide-sign-in-error").hidden = false;
}

/** The form asks for what the chosen method needs: a token has no username. */
function showMethod(method) {
  $("ide-username-field").hidden = method === "token";
  $("ide-username").required = method !== "token";
  $("ide-secret-label").textContent = { apikey: "API key", password: "Password", token: "Access token" }[method];
}

$("ide-sign-in-form").addEventListener("change", (event) => {
  if (event.target.name === "method") showMethod(event.target.value);
});

$("ide-sign-in-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("ide-sign-in-error").hidden = true;
  $("ide-sign-in-button").disabled = true;
  try {
    await signIn(credentialFrom(event.target));
  } catch (error) {
    showError(error);
  } finally {
    $("ide-sign-in-button").disabled = false;
  }
});

// Signing out forgets the credential; the reload starts a page that holds none.
$("ide-sign-out").addEventListener("click", () => {
  sessionStorage.removeItem(STORAGE_KEY);
  window.location.reload();
});

/** A sign-in of another kind (ide.ts's IdeExternalSignIn): its button, and its return from the provider. */
async function offerExternalSignIn(external) {
  const flow = await import(external.module);
  $("ide-external-button").textContent = external.label;
  $("ide-external-button").addEventListener("click", () => flow.start().catch(showError));
  $("ide-external").hidden = false;
  return flow.resume();
}

async function start() {
  // a sign-in of another kind that fails leaves the form and a kept session working
  const returned = config.externalSignIn ? await offerExternalSignIn(config.externalSignIn).catch(showError) : null;
  if (returned) return signIn({ authorization: returned, storable: false });
  const saved = sessionStorage.getItem(STORAGE_KEY);
  if (!saved) return;
  try {
    await signIn({ authorization: saved, storable: true });
  } catch {
    // a revoked or expired key: forgotten, and the form asks again
    sessionStorage.removeItem(STORAGE_KEY);
  }
}

start().catch(showError);
