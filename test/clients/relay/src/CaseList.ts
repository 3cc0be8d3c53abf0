import { graphql } from "relay-runtime";

/**
 * A filtered case list paged both ways: `@connection` compiles only while `cases` is a Relay
 * connection (edges with cursor and node, pageInfo with both directions, first/after and
 * last/before: CONTRACT §7.3); Relay builds `CaseListPaginationQuery` from `@refetchable`.
 */
export const caseList = graphql`
  fragment CaseList_query on Query
  @argumentDefinitions(
    domain: { type: "String!" }
    filter: { type: "CaseFilter" }
    orderBy: { type: "CaseOrderBy" }
    first: { type: "Int", defaultValue: 20 }
    after: { type: "String" }
    last: { type: "Int" }
    before: { type: "String" }
  )
  @refetchable(queryName: "CaseListPaginationQuery") {
    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before)
      @connection(key: "CaseList_cases", filters: ["domain", "filter", "orderBy"]) {
      totalCount
      edges {
        cursor
        node {
          id
          ...CaseDetail_case
        }
      }
    }
  }
`;
