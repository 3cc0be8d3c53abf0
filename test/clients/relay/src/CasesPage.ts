import { graphql } from "relay-runtime";

/** The page's queries: the first page of a domain's visits, and one case by its global id. */
export const casesPage = graphql`
  query CasesPageQuery($domain: String!) {
    ...CaseList_query @arguments(domain: $domain, filter: { caseType: ["visit"] }, first: 10)
  }
`;

export const casePage = graphql`
  query CasesPageCaseQuery($id: ID!) {
    node(id: $id) {
      # @alias: a Node may not be a Case, so the fragment reference is nullable
      ...CaseDetail_case @alias
    }
  }
`;
