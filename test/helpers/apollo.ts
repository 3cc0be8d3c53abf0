/**
 * Apollo Client as docs/graphql.md sets it up for a list screen: an HTTP link to a running server
 * with the user's `Authorization`, and the case list merged across pages by `relayStylePagination`,
 * keyed by every argument except the paging ones. The tests that page lists through it share it, so
 * that they test the set-up the docs give front-end teams.
 */
import { ApolloClient, HttpLink, InMemoryCache } from "@apollo/client";
import { relayStylePagination } from "@apollo/client/utilities";

export function listScreenClient(base: string, authorization: string): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({ uri: `${base}/graphql`, headers: { Authorization: authorization }, fetch }),
    cache: new InMemoryCache({ typePolicies: { Query: { fields: { cases: relayStylePagination(["domain", "filter", "orderBy"]) } } } }),
  });
}
