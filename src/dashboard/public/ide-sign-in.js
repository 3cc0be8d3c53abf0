// The GraphQL IDE's "Sign in with your organisation's account" (src/graphql/ide/ide.ts's
// IdeExternalSignIn): the dashboard's OpenID Connect flow (oidc.js, code with PKCE), run from the
// IDE's page, which is then the redirect URI the provider sends the browser back to.

import { finishSignIn, oidcSettings, startSignIn } from "./oidc.js";

const CONFIG = new URL("config.json", import.meta.url);

async function settings() {
  const found = await oidcSettings(CONFIG);
  if (!found) throw new Error("Sign-in with your organisation's account is not set up on this server.");
  return found;
}

/** Leaves for the provider's sign-in page. */
export async function start() {
  await startSignIn(await settings());
}

/** Back from the provider: the `Authorization` to use; null when the page was not opened by its answer. */
export async function resume() {
  const answer = new URLSearchParams(location.search);
  if (!answer.has("code") && !answer.has("error")) return null;
  const token = await finishSignIn(await settings());
  return token ? `Bearer ${token.accessToken}` : null;
}
