/**
 * A real OpenID Connect provider on loopback for the OIDC tests: `oidc-provider` (OpenID
 * certified), issuing JWT access tokens for one resource (the gateway's audience, RFC 8707
 * resource indicators) through the authorization code flow with PKCE, with its development
 * login and consent pages. Its keys are the test's own (generated here), so that a test can also
 * sign crafted tokens with the very key the provider publishes, and rotate them.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider from "oidc-provider";

/** the client the tests' own code flow uses (the dashboard's is `dashboard`) */
const TEST_CLIENT = "gateway-tests";
const TEST_REDIRECT = "http://127.0.0.1/tests/callback";
export const DASHBOARD_CLIENT = "dashboard";
/** the resource server's one scope */
export const API_SCOPE = "api";

export interface SigningKey {
  kid: string;
  /** the private JWK (with kid, alg, use) */
  jwk: JWK;
}

export interface IdentityProvider {
  issuer: string;
  audience: string;
  /** the key the provider signs with now */
  signingKey(): SigningKey;
  /**
   * An access token for `login`, through the authorization code flow with PKCE, the provider's
   * login and consent pages answered as a person would.
   */
  tokenFor(login: string): Promise<{ accessToken: string; expiresIn: number }>;
  /** a new signing key; the old one stays published (`keep`) or is withdrawn */
  rotateKeys(options: { keep: boolean }): Promise<SigningKey>;
  /** the access tokens issued from now on live this long */
  setAccessTokenTtl(seconds: number): void;
  /** registers the dashboard's redirect URI (known once the gateway listens) */
  allowDashboard(redirectUri: string): void;
  /** stops answering (connections refused) until `resume` */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

interface Options {
  audience: string;
  /** the `preferred_username` each login's tokens carry; a login not named here gets none (its `sub` names it) */
  preferredUsernames?: Record<string, string>;
}

export async function newSigningKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = randomBytes(8).toString("hex");
  return { kid, jwk: { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" } };
}

const base64url = (bytes: Buffer) => bytes.toString("base64url");

export async function startIdentityProvider(options: Options): Promise<IdentityProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handler) return handler(req, res);
    res.statusCode = 503;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  let keys = [await newSigningKey()];
  let accessTokenTtl = 300;
  const dashboardRedirects: string[] = [];

  /** A provider over the current keys and clients; a rotation or a new client makes a new one on the same issuer and port. */
  function install(): void {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: TEST_CLIENT,
          token_endpoint_auth_method: "none",
          redirect_uris: [TEST_REDIRECT],
          grant_types: ["authorization_code"],
          response_types: ["code"],
        },
        ...(dashboardRedirects.length
          ? [
              {
                client_id: DASHBOARD_CLIENT,
                token_endpoint_auth_method: "none",
                redirect_uris: dashboardRedirects,
                grant_types: ["authorization_code"],
                response_types: ["code"],
              },
            ]
          : []),
      ],
      jwks: { keys: keys.map((key) => key.jwk) },
      async findAccount(_ctx: unknown, sub: string) {
        return { accountId: sub, claims: async () => ({ sub }) };
      },
      // the user's name as an identity provider writes it in an access token (Keycloak does by default)
      async extraTokenClaims(_ctx: unknown, token: { accountId?: string }) {
        const preferred = token.accountId ? options.preferredUsernames?.[token.accountId] : undefined;
        return preferred ? { preferred_username: preferred } : undefined;
      },
      features: {
        devInteractions: { enabled: true },
        resourceIndicators: {
          enabled: true,
          // every token is for the gateway, whether or not the client names it (RFC 8707 `resource`)
          defaultResource: async () => options.audience,
          useGrantedResource: async () => true,
          getResourceServerInfo: async () => ({
            scope: API_SCOPE,
            audience: options.audience,
            accessTokenTTL: accessTokenTtl,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256", kid: keys[0].kid } },
          }),
        },
      },
      pkce: { required: () => true },
      // a public client's token endpoint answers the origins of its redirect URIs (the dashboard's page)
      clientBasedCORS: (_ctx: unknown, origin: string, client: { redirectUris: string[] }) =>
        client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
      cookies: { keys: [randomBytes(16).toString("hex")] },
      // the browser test's Chromium runs with a fresh profile: no session outlives a test
      ttl: { Session: 3600, Interaction: 600, Grant: 3600, AuthorizationCode: 60, IdToken: 3600, AccessToken: () => accessTokenTtl },
    });
    // the library reports refused requests as events: nothing to do with them here
    provider.on("server_error", (_ctx, error) => console.error("oidc-provider server_error", error));
    handler = provider.callback();
  }
  install();

  async function tokenFor(login: string): Promise<{ accessToken: string; expiresIn: number }> {
    const verifier = base64url(randomBytes(32));
    const challenge = base64url(createHash("sha256").update(verifier).digest());
    const jar = new Map<string, string>();
    const cookieHeader = () => [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const remember = (res: Response) => {
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const eq = pair.indexOf("=");
        const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1).trim()];
        if (value && !/expires=Thu, 01 Jan 1970/i.test(line)) jar.set(name, value);
        else jar.delete(name);
      }
    };
    /** Follows redirects until a page (the login or consent form) or the client's redirect URI with the code. */
    const follow = async (first: Response): Promise<{ page?: string; code?: string }> => {
      let res = first;
      for (let hops = 0; hops < 10; hops++) {
        remember(res);
        const location = res.headers.get("location");
        if (!location) return { page: await res.text() };
        await res.arrayBuffer();
        const next = new URL(location, issuer);
        if (next.href.startsWith(TEST_REDIRECT)) {
          const code = next.searchParams.get("code");
          if (!code) throw new Error(`the provider refused: ${next.search}`);
          return { code };
        }
        res = await fetch(next, { redirect: "manual", headers: { cookie: cookieHeader() } });
      }
      throw new Error("too many redirects");
    };
    const submit = async (page: string, fields: Record<string, string>) => {
      const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
      if (!action) throw new Error(`no form on the provider's page:\n${page}`);
      const res = await fetch(new URL(action.replace(/&amp;/g, "&"), issuer), {
        method: "POST",
        redirect: "manual",
        headers: { cookie: cookieHeader(), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields),
      });
      return follow(res);
    };

    const authorize = new URL("/auth", issuer);
    const params = {
      client_id: TEST_CLIENT,
      response_type: "code",
      redirect_uri: TEST_REDIRECT,
      scope: `openid ${API_SCOPE}`,
      state: base64url(randomBytes(8)),
      code_challenge: challenge,
      code_challenge_method: "S256",
    };
    for (const [name, value] of Object.entries(params)) authorize.searchParams.set(name, value);
    let step = await follow(await fetch(authorize, { redirect: "manual" }));
    step = await submit(step.page!, { prompt: "login", login, password: "any" });
    if (!step.code) step = await submit(step.page!, { prompt: "consent" });
    if (!step.code) throw new Error(`no code after consent:\n${step.page}`);
    const res = await fetch(new URL("/token", issuer), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: step.code,
        redirect_uri: TEST_REDIRECT,
        client_id: TEST_CLIENT,
        code_verifier: verifier,
      }),
    });
    const body = (await res.json()) as { access_token?: string; expires_in?: number };
    if (!body.access_token) throw new Error(`the token endpoint answered ${res.status} ${JSON.stringify(body)}`);
    return { accessToken: body.access_token, expiresIn: body.expires_in ?? 0 };
  }

  return {
    issuer,
    audience: options.audience,
    signingKey: () => keys[0],
    tokenFor,
    async rotateKeys({ keep }) {
      const next = await newSigningKey();
      keys = keep ? [next, ...keys] : [next];
      install();
      return next;
    },
    setAccessTokenTtl(seconds) {
      accessTokenTtl = seconds;
    },
    allowDashboard(redirectUri) {
      dashboardRedirects.push(redirectUri);
      install();
    },
    async pause() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
    async resume() {
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
