import type { ApolloServerPlugin } from "@apollo/server";

/**
 * An Apollo plugin: a response that carries no data and whose only errors have `code` goes out with
 * HTTP `status` (and `headers`), as REST answers the same refusal (graphql-over-HTTP allows a
 * non-200 status then). The use-payload-too-large and use-service-unavailable plugins are two of it.
 */
export function statusWhenOnly(code: string, status: number, headers: Record<string, string> = {}): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response }) {
          if (response.body.kind !== "single") return;
          const { errors, data } = response.body.singleResult;
          if (!errors?.length || (data && Object.values(data).some((v) => v !== null))) return;
          if (!errors.every((e) => e.extensions?.code === code)) return;
          response.http.status = status;
          for (const [name, value] of Object.entries(headers)) response.http.headers.set(name, value);
        },
      };
    },
  };
}
