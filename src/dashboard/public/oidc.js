// Sign-in through the server's OpenID Connect provider (OIDC_ISSUER, OIDC_CLIENT_ID): the
// authorization code flow with PKCE (RFC 7636, S256) for a public client, written out with
// WebCrypto. The page goes to the provider's sign-in, comes back with a one-time code, and trades
// it (with the verifier only this tab knows) for an access token at the provider's token endpoint.

/** this tab's pending sign-in: the PKCE verifier and the state that must come back */
const PENDING_KEY = "dashboard.oidc.pending";

/**
 * The provider's settings from the server, or null when the dashboard does not sign in there.
 * `configUrl`: the dashboard's config.json, for a page elsewhere on the server (the GraphQL IDE).
 */
export async function oidcSettings(configUrl = new URL("config.json", location.href)) {
  let response;
  try {
    response = await fetch(configUrl, { credentials: "omit" });
  } catch {
    throw new Error("Cannot reach the server: check the connection and try again.");
  }
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error(`Sign-in with your organisation's account is not available right now: ${body?.error ?? response.status}`);
  return body.oidc;
}

function base64url(bytes) {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

const randomString = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

/** This page without query or fragment: the redirect URI the client is registered with. */
const redirectUri = () => `${location.origin}${location.pathname}`;

/** Leaves for the provider's sign-in page; it sends the browser back here with a code. */
export async function startSignIn(settings) {
  const verifier = randomString();
  const state = randomString();
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state }));
  const url = new URL(settings.authorizationEndpoint);
  const params = {
    response_type: "code",
    client_id: settings.clientId,
    redirect_uri: redirectUri(),
    scope: settings.scope,
    state,
    code_challenge: base64url(new Uint8Array(digest)),
    code_challenge_method: "S256",
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  location.assign(url.href);
}

/**
 * Back from the provider: the access token and its expiry (ms since the epoch) for the code in
 * this page's address, or null when the address carries no answer. The answer is taken off the
 * address and the tab's history at once: a code is good for one trade only.
 */
export async function finishSignIn(settings) {
  const answer = new URLSearchParams(location.search);
  if (!answer.has("code") && !answer.has("error")) return null;
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? "null");
  sessionStorage.removeItem(PENDING_KEY);
  history.replaceState(null, "", redirectUri());
  if (answer.has("error")) throw new Error(`The identity provider did not sign you in: ${answer.get("error_description") ?? answer.get("error")}`);
  if (!pending || answer.get("state") !== pending.state) throw new Error("This sign-in was not started in this tab: sign in again.");
  // RFC 9207: an answer naming another issuer is another provider's (a mix-up)
  if (answer.has("iss") && answer.get("iss") !== settings.issuer) throw new Error("The sign-in answer comes from another identity provider.");
  const body = await tokenRequest(settings, {
    grant_type: "authorization_code",
    code: answer.get("code"),
    redirect_uri: redirectUri(),
    client_id: settings.clientId,
    code_verifier: pending.verifier,
  });
  const lifetime = Number(body.expires_in);
  return { accessToken: body.access_token, expiresAt: Number.isFinite(lifetime) && lifetime > 0 ? Date.now() + lifetime * 1000 : null };
}

async function tokenRequest(settings, form) {
  let response;
  try {
    response = await fetch(settings.tokenEndpoint, {
      method: "POST",
      credentials: "omit",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form),
    });
  } catch {
    throw new Error("Cannot reach the identity provider: check the connection and try again.");
  }
  const body = await response.json().catch(() => null);
  if (!response.ok || typeof body?.access_token !== "string") {
    throw new Error(`The identity provider gave no access token (${body?.error_description ?? body?.error ?? response.status}).`);
  }
  return body;
}
