/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  mutation CreateDomain($name: String!) {\n    createDomain(name: $name) { id name }\n  }\n": typeof types.CreateDomainDocument,
    "\n  mutation CreateUser($input: CreateUserInput!) {\n    createUser(input: $input) { id username isSuperuser memberships { domain permissions } }\n  }\n": typeof types.CreateUserDocument,
    "\n  mutation CreateApiKey($username: String!) {\n    createApiKey(username: $username) { key apiKey { id prefix username revokedAt } }\n  }\n": typeof types.CreateApiKeyDocument,
    "\n  mutation RevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id revokedAt }\n  }\n": typeof types.RevokeApiKeyDocument,
    "\n  mutation SetPermissions($username: String!, $domain: String!, $permissions: [Permission!]!) {\n    setPermissions(username: $username, domain: $domain, permissions: $permissions) { domain permissions }\n  }\n": typeof types.SetPermissionsDocument,
    "\n  mutation CreateLocationType($domain: String!, $input: LocationTypeInput!) {\n    createLocationType(domain: $domain, input: $input) { code name parentCode domain }\n  }\n": typeof types.CreateLocationTypeDocument,
    "\n  mutation CreateOAuthClient($input: CreateOAuthClientInput!) {\n    createOAuthClient(input: $input) { clientId clientSecret client { name grants } }\n  }\n": typeof types.CreateOAuthClientDocument,
    "\n  query Listing($username: String!, $domain: String) {\n    domains { name }\n    users(domain: $domain) { username }\n    apiKeys(username: $username) { prefix revokedAt }\n  }\n": typeof types.ListingDocument,
    "\n  query Me {\n    me { username isSuperuser memberships { domain permissions } }\n  }\n": typeof types.MeDocument,
    "\n  query AdminNodeMe {\n    me { id username }\n  }\n": typeof types.AdminNodeMeDocument,
    "\n  query AdminNodeDomains {\n    domains { id name }\n  }\n": typeof types.AdminNodeDomainsDocument,
    "\n  query AdminNodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on User { username memberships { domain permissions } }\n      ... on Domain { name }\n    }\n  }\n": typeof types.AdminNodeByIdDocument,
    "\n  query GqlAppsWithMedia($domain: String!) {\n    apps(domain: $domain) {\n      name\n      versions { version source }\n      multimediaReferences { path mediaType present file { md5 } }\n      multimedia { md5 mediaClass }\n    }\n  }\n": typeof types.GqlAppsWithMediaDocument,
    "\n  query GqlAppsOfTwoDomains($first: String!, $second: String!) {\n    first: apps(domain: $first) { name versions { version } multimediaReferences { path present } multimedia { md5 } }\n    second: apps(domain: $second) { name versions { version } multimediaReferences { path present } multimedia { md5 } }\n  }\n": typeof types.GqlAppsOfTwoDomainsDocument,
    "\n  query ApolloSortedCases($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after) {\n      totalCount\n      edges { cursor node { id caseId caseName dateClosed } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.ApolloSortedCasesDocument,
    "\n  query CountedCases($domain: String!, $first: Int!, $caseType: [String!]) {\n    cases(domain: $domain, first: $first, filter: { caseType: $caseType }) {\n      totalCount\n      nodes {\n        caseId\n      }\n    }\n  }\n": typeof types.CountedCasesDocument,
    "\n  query PagedCases($domain: String!, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, first: $first, after: $after, last: $last, before: $before, filter: { caseType: [\"patient\"] }) {\n      totalCount\n      nodes {\n        caseId\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n": typeof types.PagedCasesDocument,
    "\n  query ConnCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { caseId } }\n      nodes { caseId }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.ConnCasesPageDocument,
    "\n  query OrderedCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id caseId caseName dateOpened lastModified dateClosed } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.OrderedCasesPageDocument,
    "\n  mutation GqlCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { caseId caseName externalId properties closed } }\n  }\n": typeof types.GqlCreateCaseDocument,
    "\n  mutation GqlUpdateCase($domain: String!, $caseId: ID!, $input: CaseInput!) {\n    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { caseName properties closed dateClosed } }\n  }\n": typeof types.GqlUpdateCaseDocument,
    "\n  mutation GqlUpsertCase($domain: String!, $externalId: String!, $input: CaseInput!) {\n    upsertCase(domain: $domain, externalId: $externalId, input: $input) { case { caseId caseName } }\n  }\n": typeof types.GqlUpsertCaseDocument,
    "\n  mutation GqlBulkWrite($domain: String!, $items: [CaseBulkItem!]!) {\n    bulkWriteCases(domain: $domain, items: $items) { xformId cases { caseId caseName parent { caseId } } }\n  }\n": typeof types.GqlBulkWriteDocument,
    "\n  query GqlCasesPage($domain: String!, $filter: CaseFilter, $first: Int, $after: String) {\n    cases(domain: $domain, filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      nodes { caseId caseName }\n    }\n  }\n": typeof types.GqlCasesPageDocument,
    "\n  query GqlCasesWithRelations($domain: String!, $first: Int) {\n    cases(domain: $domain, first: $first, filter: { caseType: [\"visit\"] }) {\n      nodes {\n        caseId\n        parent { caseId caseName }\n        indices { name relationship case { caseId } }\n        openedBy { username }\n      }\n    }\n  }\n": typeof types.GqlCasesWithRelationsDocument,
    "\n  query GqlRelations($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) {\n      caseName\n      children { caseName }\n      extensions { caseName }\n      host { caseName }\n      forms { id formId username deviceId xmlns caseIds }\n    }\n  }\n": typeof types.GqlRelationsDocument,
    "\n  query GqlByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {\n      matchingRecords missingRecords entries { by requestedId case { caseName } }\n    }\n  }\n": typeof types.GqlByIdsDocument,
    "\n  query GqlByExternal($domain: String!, $externalId: String!) {\n    caseByExternalId(domain: $domain, externalId: $externalId) { caseName }\n  }\n": typeof types.GqlByExternalDocument,
    "\n  query GqlForm($domain: String!, $formId: ID!) {\n    form(domain: $domain, formId: $formId) { formId xmlns username xml problem caseIds }\n  }\n": typeof types.GqlFormDocument,
    "\n  query ApolloIdsByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {\n      matchingRecords\n      missingRecords\n      entries { by requestedId case { id caseId caseName openedBy { userId username } } }\n    }\n  }\n": typeof types.ApolloIdsByIdsDocument,
    "\n  query ApolloIdsCaseReads($domain: String!, $caseId: ID!, $externalId: String!, $id: ID!) {\n    cases(domain: $domain, first: 100) { nodes { id caseId caseName openedBy { userId username } } }\n    case(domain: $domain, caseId: $caseId) { id caseName openedBy { userId username } parent { id openedBy { userId username } } }\n    caseByExternalId(domain: $domain, externalId: $externalId) { id caseName openedBy { userId username } }\n    node(id: $id) { id ... on Case { caseName openedBy { userId username } } }\n  }\n": typeof types.ApolloIdsCaseReadsDocument,
    "\n  mutation ApolloIdsCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId caseName openedBy { userId username } } }\n  }\n": typeof types.ApolloIdsCreateCaseDocument,
    "\n  query ApolloIdsApiKeys($first: String!, $second: String!) {\n    first: apiKeys(username: $first) { id keyId username name prefix revokedAt }\n    second: apiKeys(username: $second) { id keyId username name prefix revokedAt }\n  }\n": typeof types.ApolloIdsApiKeysDocument,
    "\n  mutation ApolloIdsCreateApiKey($username: String!, $name: String) {\n    createApiKey(username: $username, name: $name) { key apiKey { id keyId username name prefix revokedAt } }\n  }\n": typeof types.ApolloIdsCreateApiKeyDocument,
    "\n  mutation ApolloIdsRevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id keyId revokedAt }\n  }\n": typeof types.ApolloIdsRevokeApiKeyDocument,
    "\n  query ApolloCasePage($domain: String!, $filter: CaseFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id caseId caseName } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.ApolloCasePageDocument,
    "\n  mutation ApolloRenameCase($domain: String!, $caseId: ID!, $input: CaseInput!) {\n    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { id caseName } }\n  }\n": typeof types.ApolloRenameCaseDocument,
    "\n  subscription UrqlCaseChanged($domain: String!, $caseType: String) {\n    caseChanged(domain: $domain, caseType: $caseType) { caseId caseType domain formId }\n  }\n": typeof types.UrqlCaseChangedDocument,
    "\n  mutation UrqlCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId } }\n  }\n": typeof types.UrqlCreateCaseDocument,
    "\n  query UrqlCaseCount($domain: String!, $filter: CaseFilter) {\n    cases(domain: $domain, filter: $filter, first: 1) { totalCount }\n  }\n": typeof types.UrqlCaseCountDocument,
    "\n  query GlobalIdsApiKeys($username: String!) {\n    apiKeys(username: $username) { id keyId prefix revokedAt }\n  }\n": typeof types.GlobalIdsApiKeysDocument,
    "\n  mutation GlobalIdsCreateApiKey($username: String!) {\n    createApiKey(username: $username) { key apiKey { id keyId username } }\n  }\n": typeof types.GlobalIdsCreateApiKeyDocument,
    "\n  mutation GlobalIdsRevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id keyId revokedAt }\n  }\n": typeof types.GlobalIdsRevokeApiKeyDocument,
    "\n  query GlobalIdsApiKeyNode($id: ID!) {\n    node(id: $id) { __typename id ... on ApiKey { keyId username prefix } }\n  }\n": typeof types.GlobalIdsApiKeyNodeDocument,
    "\n  mutation GlobalIdsCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { case { caseId externalId openedBy { userId username } } }\n  }\n": typeof types.GlobalIdsCreateCaseDocument,
    "\n  query GlobalIdsFetchEntries($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) { entries { by requestedId case { caseId } } }\n  }\n": typeof types.GlobalIdsFetchEntriesDocument,
    "\n  query GlobalIdsFormOfCase($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) { forms { userId } }\n  }\n": typeof types.GlobalIdsFormOfCaseDocument,
    "\n  mutation NodeCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId } }\n  }\n": typeof types.NodeCreateCaseDocument,
    "\n  query NodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Case { caseId caseName }\n      ... on Form { formId caseIds }\n    }\n  }\n": typeof types.NodeByIdDocument,
    "\n  query NodesByIds($ids: [ID!]!) {\n    nodes(ids: $ids) { __typename id }\n  }\n": typeof types.NodesByIdsDocument,
    "\n  query NodeCaseForms($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) { id forms { id formId } }\n  }\n": typeof types.NodeCaseFormsDocument,
    "\n  query LocationConnectionPage(\n    $domain: String!\n    $filter: LocationFilter\n    $orderBy: LocationOrderBy\n    $first: Int\n    $after: String\n    $last: Int\n    $before: String\n  ) {\n    locations(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { locationId name } }\n      nodes { locationId }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.LocationConnectionPageDocument,
    "\n  query GqlLocationTree($domain: String!, $id: ID!, $depth: Int) {\n    location(domain: $domain, locationId: $id) {\n      name\n      locationType { code parentCode }\n      parent { name }\n      children { name }\n      ancestors { name }\n      descendants(depth: $depth) { name }\n    }\n  }\n": typeof types.GqlLocationTreeDocument,
    "\n  query GqlLocationFirstOfTree($domain: String!, $id: ID!, $first: Int) {\n    location(domain: $domain, locationId: $id) {\n      children(first: $first) { name children(first: $first) { name } }\n      descendants(first: $first) { name }\n    }\n  }\n": typeof types.GqlLocationFirstOfTreeDocument,
    "\n  query GqlLocationPage($domain: String!, $filter: LocationFilter, $first: Int, $after: String) {\n    locations(domain: $domain, filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      nodes { name siteCode parent { name } ancestors { name } locationType { code } }\n    }\n  }\n": typeof types.GqlLocationPageDocument,
    "\n  mutation GqlCreateLocation($domain: String!, $input: LocationInput!) {\n    createLocation(domain: $domain, input: $input) { locationId name siteCode parentLocationId }\n  }\n": typeof types.GqlCreateLocationDocument,
    "\n  mutation GqlUpdateLocation($domain: String!, $id: ID!, $input: LocationInput!) {\n    updateLocation(domain: $domain, locationId: $id, input: $input) { name }\n  }\n": typeof types.GqlUpdateLocationDocument,
    "\n  mutation GqlBulkLocations($domain: String!, $items: [LocationBulkItem!]!) {\n    bulkLocations(domain: $domain, items: $items)\n  }\n": typeof types.GqlBulkLocationsDocument,
    "\n  query GqlBySiteCode($domain: String!, $siteCode: String!) {\n    locationBySiteCode(domain: $domain, siteCode: $siteCode) { name }\n  }\n": typeof types.GqlBySiteCodeDocument,
    "\n  mutation GqlUpdateLocationType($domain: String!, $code: String!, $name: String, $parentCode: String) {\n    updateLocationType(domain: $domain, code: $code, name: $name, parentCode: $parentCode) { code name parentCode }\n  }\n": typeof types.GqlUpdateLocationTypeDocument,
    "\n  mutation GqlDeleteLocationType($domain: String!, $code: String!) {\n    deleteLocationType(domain: $domain, code: $code)\n  }\n": typeof types.GqlDeleteLocationTypeDocument,
    "\n  query LocationNodeIds($domain: String!, $locationId: ID!) {\n    location(domain: $domain, locationId: $locationId) { id locationId locationType { id code } }\n    locationTypes(domain: $domain) { id code }\n  }\n": typeof types.LocationNodeIdsDocument,
    "\n  query LocationNodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Location { locationId name locationType { code } }\n      ... on LocationType { code name parentCode }\n    }\n  }\n": typeof types.LocationNodeByIdDocument,
    "\n  query OrderedLocationsPage($domain: String!, $orderBy: LocationOrderBy, $first: Int, $after: String) {\n    locations(domain: $domain, filter: { locationTypeCode: \"facility\" }, orderBy: $orderBy, first: $first, after: $after) {\n      totalCount\n      edges { cursor node { locationId name siteCode } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.OrderedLocationsPageDocument,
    "\n  query ObjectStoreFiles($domain: String!, $appId: ID!) {\n    app(domain: $domain, appId: $appId) {\n      multimedia {\n        sha256\n        size\n        contentType\n        downloadUrl\n      }\n    }\n  }\n": typeof types.ObjectStoreFilesDocument,
};
const documents: Documents = {
    "\n  mutation CreateDomain($name: String!) {\n    createDomain(name: $name) { id name }\n  }\n": types.CreateDomainDocument,
    "\n  mutation CreateUser($input: CreateUserInput!) {\n    createUser(input: $input) { id username isSuperuser memberships { domain permissions } }\n  }\n": types.CreateUserDocument,
    "\n  mutation CreateApiKey($username: String!) {\n    createApiKey(username: $username) { key apiKey { id prefix username revokedAt } }\n  }\n": types.CreateApiKeyDocument,
    "\n  mutation RevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id revokedAt }\n  }\n": types.RevokeApiKeyDocument,
    "\n  mutation SetPermissions($username: String!, $domain: String!, $permissions: [Permission!]!) {\n    setPermissions(username: $username, domain: $domain, permissions: $permissions) { domain permissions }\n  }\n": types.SetPermissionsDocument,
    "\n  mutation CreateLocationType($domain: String!, $input: LocationTypeInput!) {\n    createLocationType(domain: $domain, input: $input) { code name parentCode domain }\n  }\n": types.CreateLocationTypeDocument,
    "\n  mutation CreateOAuthClient($input: CreateOAuthClientInput!) {\n    createOAuthClient(input: $input) { clientId clientSecret client { name grants } }\n  }\n": types.CreateOAuthClientDocument,
    "\n  query Listing($username: String!, $domain: String) {\n    domains { name }\n    users(domain: $domain) { username }\n    apiKeys(username: $username) { prefix revokedAt }\n  }\n": types.ListingDocument,
    "\n  query Me {\n    me { username isSuperuser memberships { domain permissions } }\n  }\n": types.MeDocument,
    "\n  query AdminNodeMe {\n    me { id username }\n  }\n": types.AdminNodeMeDocument,
    "\n  query AdminNodeDomains {\n    domains { id name }\n  }\n": types.AdminNodeDomainsDocument,
    "\n  query AdminNodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on User { username memberships { domain permissions } }\n      ... on Domain { name }\n    }\n  }\n": types.AdminNodeByIdDocument,
    "\n  query GqlAppsWithMedia($domain: String!) {\n    apps(domain: $domain) {\n      name\n      versions { version source }\n      multimediaReferences { path mediaType present file { md5 } }\n      multimedia { md5 mediaClass }\n    }\n  }\n": types.GqlAppsWithMediaDocument,
    "\n  query GqlAppsOfTwoDomains($first: String!, $second: String!) {\n    first: apps(domain: $first) { name versions { version } multimediaReferences { path present } multimedia { md5 } }\n    second: apps(domain: $second) { name versions { version } multimediaReferences { path present } multimedia { md5 } }\n  }\n": types.GqlAppsOfTwoDomainsDocument,
    "\n  query ApolloSortedCases($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after) {\n      totalCount\n      edges { cursor node { id caseId caseName dateClosed } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.ApolloSortedCasesDocument,
    "\n  query CountedCases($domain: String!, $first: Int!, $caseType: [String!]) {\n    cases(domain: $domain, first: $first, filter: { caseType: $caseType }) {\n      totalCount\n      nodes {\n        caseId\n      }\n    }\n  }\n": types.CountedCasesDocument,
    "\n  query PagedCases($domain: String!, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, first: $first, after: $after, last: $last, before: $before, filter: { caseType: [\"patient\"] }) {\n      totalCount\n      nodes {\n        caseId\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n": types.PagedCasesDocument,
    "\n  query ConnCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { caseId } }\n      nodes { caseId }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.ConnCasesPageDocument,
    "\n  query OrderedCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id caseId caseName dateOpened lastModified dateClosed } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.OrderedCasesPageDocument,
    "\n  mutation GqlCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { caseId caseName externalId properties closed } }\n  }\n": types.GqlCreateCaseDocument,
    "\n  mutation GqlUpdateCase($domain: String!, $caseId: ID!, $input: CaseInput!) {\n    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { caseName properties closed dateClosed } }\n  }\n": types.GqlUpdateCaseDocument,
    "\n  mutation GqlUpsertCase($domain: String!, $externalId: String!, $input: CaseInput!) {\n    upsertCase(domain: $domain, externalId: $externalId, input: $input) { case { caseId caseName } }\n  }\n": types.GqlUpsertCaseDocument,
    "\n  mutation GqlBulkWrite($domain: String!, $items: [CaseBulkItem!]!) {\n    bulkWriteCases(domain: $domain, items: $items) { xformId cases { caseId caseName parent { caseId } } }\n  }\n": types.GqlBulkWriteDocument,
    "\n  query GqlCasesPage($domain: String!, $filter: CaseFilter, $first: Int, $after: String) {\n    cases(domain: $domain, filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      nodes { caseId caseName }\n    }\n  }\n": types.GqlCasesPageDocument,
    "\n  query GqlCasesWithRelations($domain: String!, $first: Int) {\n    cases(domain: $domain, first: $first, filter: { caseType: [\"visit\"] }) {\n      nodes {\n        caseId\n        parent { caseId caseName }\n        indices { name relationship case { caseId } }\n        openedBy { username }\n      }\n    }\n  }\n": types.GqlCasesWithRelationsDocument,
    "\n  query GqlRelations($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) {\n      caseName\n      children { caseName }\n      extensions { caseName }\n      host { caseName }\n      forms { id formId username deviceId xmlns caseIds }\n    }\n  }\n": types.GqlRelationsDocument,
    "\n  query GqlByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {\n      matchingRecords missingRecords entries { by requestedId case { caseName } }\n    }\n  }\n": types.GqlByIdsDocument,
    "\n  query GqlByExternal($domain: String!, $externalId: String!) {\n    caseByExternalId(domain: $domain, externalId: $externalId) { caseName }\n  }\n": types.GqlByExternalDocument,
    "\n  query GqlForm($domain: String!, $formId: ID!) {\n    form(domain: $domain, formId: $formId) { formId xmlns username xml problem caseIds }\n  }\n": types.GqlFormDocument,
    "\n  query ApolloIdsByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {\n      matchingRecords\n      missingRecords\n      entries { by requestedId case { id caseId caseName openedBy { userId username } } }\n    }\n  }\n": types.ApolloIdsByIdsDocument,
    "\n  query ApolloIdsCaseReads($domain: String!, $caseId: ID!, $externalId: String!, $id: ID!) {\n    cases(domain: $domain, first: 100) { nodes { id caseId caseName openedBy { userId username } } }\n    case(domain: $domain, caseId: $caseId) { id caseName openedBy { userId username } parent { id openedBy { userId username } } }\n    caseByExternalId(domain: $domain, externalId: $externalId) { id caseName openedBy { userId username } }\n    node(id: $id) { id ... on Case { caseName openedBy { userId username } } }\n  }\n": types.ApolloIdsCaseReadsDocument,
    "\n  mutation ApolloIdsCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId caseName openedBy { userId username } } }\n  }\n": types.ApolloIdsCreateCaseDocument,
    "\n  query ApolloIdsApiKeys($first: String!, $second: String!) {\n    first: apiKeys(username: $first) { id keyId username name prefix revokedAt }\n    second: apiKeys(username: $second) { id keyId username name prefix revokedAt }\n  }\n": types.ApolloIdsApiKeysDocument,
    "\n  mutation ApolloIdsCreateApiKey($username: String!, $name: String) {\n    createApiKey(username: $username, name: $name) { key apiKey { id keyId username name prefix revokedAt } }\n  }\n": types.ApolloIdsCreateApiKeyDocument,
    "\n  mutation ApolloIdsRevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id keyId revokedAt }\n  }\n": types.ApolloIdsRevokeApiKeyDocument,
    "\n  query ApolloCasePage($domain: String!, $filter: CaseFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id caseId caseName } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.ApolloCasePageDocument,
    "\n  mutation ApolloRenameCase($domain: String!, $caseId: ID!, $input: CaseInput!) {\n    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { id caseName } }\n  }\n": types.ApolloRenameCaseDocument,
    "\n  subscription UrqlCaseChanged($domain: String!, $caseType: String) {\n    caseChanged(domain: $domain, caseType: $caseType) { caseId caseType domain formId }\n  }\n": types.UrqlCaseChangedDocument,
    "\n  mutation UrqlCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId } }\n  }\n": types.UrqlCreateCaseDocument,
    "\n  query UrqlCaseCount($domain: String!, $filter: CaseFilter) {\n    cases(domain: $domain, filter: $filter, first: 1) { totalCount }\n  }\n": types.UrqlCaseCountDocument,
    "\n  query GlobalIdsApiKeys($username: String!) {\n    apiKeys(username: $username) { id keyId prefix revokedAt }\n  }\n": types.GlobalIdsApiKeysDocument,
    "\n  mutation GlobalIdsCreateApiKey($username: String!) {\n    createApiKey(username: $username) { key apiKey { id keyId username } }\n  }\n": types.GlobalIdsCreateApiKeyDocument,
    "\n  mutation GlobalIdsRevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id keyId revokedAt }\n  }\n": types.GlobalIdsRevokeApiKeyDocument,
    "\n  query GlobalIdsApiKeyNode($id: ID!) {\n    node(id: $id) { __typename id ... on ApiKey { keyId username prefix } }\n  }\n": types.GlobalIdsApiKeyNodeDocument,
    "\n  mutation GlobalIdsCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { case { caseId externalId openedBy { userId username } } }\n  }\n": types.GlobalIdsCreateCaseDocument,
    "\n  query GlobalIdsFetchEntries($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) { entries { by requestedId case { caseId } } }\n  }\n": types.GlobalIdsFetchEntriesDocument,
    "\n  query GlobalIdsFormOfCase($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) { forms { userId } }\n  }\n": types.GlobalIdsFormOfCaseDocument,
    "\n  mutation NodeCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId } }\n  }\n": types.NodeCreateCaseDocument,
    "\n  query NodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Case { caseId caseName }\n      ... on Form { formId caseIds }\n    }\n  }\n": types.NodeByIdDocument,
    "\n  query NodesByIds($ids: [ID!]!) {\n    nodes(ids: $ids) { __typename id }\n  }\n": types.NodesByIdsDocument,
    "\n  query NodeCaseForms($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) { id forms { id formId } }\n  }\n": types.NodeCaseFormsDocument,
    "\n  query LocationConnectionPage(\n    $domain: String!\n    $filter: LocationFilter\n    $orderBy: LocationOrderBy\n    $first: Int\n    $after: String\n    $last: Int\n    $before: String\n  ) {\n    locations(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { locationId name } }\n      nodes { locationId }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.LocationConnectionPageDocument,
    "\n  query GqlLocationTree($domain: String!, $id: ID!, $depth: Int) {\n    location(domain: $domain, locationId: $id) {\n      name\n      locationType { code parentCode }\n      parent { name }\n      children { name }\n      ancestors { name }\n      descendants(depth: $depth) { name }\n    }\n  }\n": types.GqlLocationTreeDocument,
    "\n  query GqlLocationFirstOfTree($domain: String!, $id: ID!, $first: Int) {\n    location(domain: $domain, locationId: $id) {\n      children(first: $first) { name children(first: $first) { name } }\n      descendants(first: $first) { name }\n    }\n  }\n": types.GqlLocationFirstOfTreeDocument,
    "\n  query GqlLocationPage($domain: String!, $filter: LocationFilter, $first: Int, $after: String) {\n    locations(domain: $domain, filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      nodes { name siteCode parent { name } ancestors { name } locationType { code } }\n    }\n  }\n": types.GqlLocationPageDocument,
    "\n  mutation GqlCreateLocation($domain: String!, $input: LocationInput!) {\n    createLocation(domain: $domain, input: $input) { locationId name siteCode parentLocationId }\n  }\n": types.GqlCreateLocationDocument,
    "\n  mutation GqlUpdateLocation($domain: String!, $id: ID!, $input: LocationInput!) {\n    updateLocation(domain: $domain, locationId: $id, input: $input) { name }\n  }\n": types.GqlUpdateLocationDocument,
    "\n  mutation GqlBulkLocations($domain: String!, $items: [LocationBulkItem!]!) {\n    bulkLocations(domain: $domain, items: $items)\n  }\n": types.GqlBulkLocationsDocument,
    "\n  query GqlBySiteCode($domain: String!, $siteCode: String!) {\n    locationBySiteCode(domain: $domain, siteCode: $siteCode) { name }\n  }\n": types.GqlBySiteCodeDocument,
    "\n  mutation GqlUpdateLocationType($domain: String!, $code: String!, $name: String, $parentCode: String) {\n    updateLocationType(domain: $domain, code: $code, name: $name, parentCode: $parentCode) { code name parentCode }\n  }\n": types.GqlUpdateLocationTypeDocument,
    "\n  mutation GqlDeleteLocationType($domain: String!, $code: String!) {\n    deleteLocationType(domain: $domain, code: $code)\n  }\n": types.GqlDeleteLocationTypeDocument,
    "\n  query LocationNodeIds($domain: String!, $locationId: ID!) {\n    location(domain: $domain, locationId: $locationId) { id locationId locationType { id code } }\n    locationTypes(domain: $domain) { id code }\n  }\n": types.LocationNodeIdsDocument,
    "\n  query LocationNodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Location { locationId name locationType { code } }\n      ... on LocationType { code name parentCode }\n    }\n  }\n": types.LocationNodeByIdDocument,
    "\n  query OrderedLocationsPage($domain: String!, $orderBy: LocationOrderBy, $first: Int, $after: String) {\n    locations(domain: $domain, filter: { locationTypeCode: \"facility\" }, orderBy: $orderBy, first: $first, after: $after) {\n      totalCount\n      edges { cursor node { locationId name siteCode } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.OrderedLocationsPageDocument,
    "\n  query ObjectStoreFiles($domain: String!, $appId: ID!) {\n    app(domain: $domain, appId: $appId) {\n      multimedia {\n        sha256\n        size\n        contentType\n        downloadUrl\n      }\n    }\n  }\n": types.ObjectStoreFilesDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateDomain($name: String!) {\n    createDomain(name: $name) { id name }\n  }\n"): (typeof documents)["\n  mutation CreateDomain($name: String!) {\n    createDomain(name: $name) { id name }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateUser($input: CreateUserInput!) {\n    createUser(input: $input) { id username isSuperuser memberships { domain permissions } }\n  }\n"): (typeof documents)["\n  mutation CreateUser($input: CreateUserInput!) {\n    createUser(input: $input) { id username isSuperuser memberships { domain permissions } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateApiKey($username: String!) {\n    createApiKey(username: $username) { key apiKey { id prefix username revokedAt } }\n  }\n"): (typeof documents)["\n  mutation CreateApiKey($username: String!) {\n    createApiKey(username: $username) { key apiKey { id prefix username revokedAt } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id revokedAt }\n  }\n"): (typeof documents)["\n  mutation RevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id revokedAt }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetPermissions($username: String!, $domain: String!, $permissions: [Permission!]!) {\n    setPermissions(username: $username, domain: $domain, permissions: $permissions) { domain permissions }\n  }\n"): (typeof documents)["\n  mutation SetPermissions($username: String!, $domain: String!, $permissions: [Permission!]!) {\n    setPermissions(username: $username, domain: $domain, permissions: $permissions) { domain permissions }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateLocationType($domain: String!, $input: LocationTypeInput!) {\n    createLocationType(domain: $domain, input: $input) { code name parentCode domain }\n  }\n"): (typeof documents)["\n  mutation CreateLocationType($domain: String!, $input: LocationTypeInput!) {\n    createLocationType(domain: $domain, input: $input) { code name parentCode domain }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateOAuthClient($input: CreateOAuthClientInput!) {\n    createOAuthClient(input: $input) { clientId clientSecret client { name grants } }\n  }\n"): (typeof documents)["\n  mutation CreateOAuthClient($input: CreateOAuthClientInput!) {\n    createOAuthClient(input: $input) { clientId clientSecret client { name grants } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Listing($username: String!, $domain: String) {\n    domains { name }\n    users(domain: $domain) { username }\n    apiKeys(username: $username) { prefix revokedAt }\n  }\n"): (typeof documents)["\n  query Listing($username: String!, $domain: String) {\n    domains { name }\n    users(domain: $domain) { username }\n    apiKeys(username: $username) { prefix revokedAt }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Me {\n    me { username isSuperuser memberships { domain permissions } }\n  }\n"): (typeof documents)["\n  query Me {\n    me { username isSuperuser memberships { domain permissions } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminNodeMe {\n    me { id username }\n  }\n"): (typeof documents)["\n  query AdminNodeMe {\n    me { id username }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminNodeDomains {\n    domains { id name }\n  }\n"): (typeof documents)["\n  query AdminNodeDomains {\n    domains { id name }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AdminNodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on User { username memberships { domain permissions } }\n      ... on Domain { name }\n    }\n  }\n"): (typeof documents)["\n  query AdminNodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on User { username memberships { domain permissions } }\n      ... on Domain { name }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlAppsWithMedia($domain: String!) {\n    apps(domain: $domain) {\n      name\n      versions { version source }\n      multimediaReferences { path mediaType present file { md5 } }\n      multimedia { md5 mediaClass }\n    }\n  }\n"): (typeof documents)["\n  query GqlAppsWithMedia($domain: String!) {\n    apps(domain: $domain) {\n      name\n      versions { version source }\n      multimediaReferences { path mediaType present file { md5 } }\n      multimedia { md5 mediaClass }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlAppsOfTwoDomains($first: String!, $second: String!) {\n    first: apps(domain: $first) { name versions { version } multimediaReferences { path present } multimedia { md5 } }\n    second: apps(domain: $second) { name versions { version } multimediaReferences { path present } multimedia { md5 } }\n  }\n"): (typeof documents)["\n  query GqlAppsOfTwoDomains($first: String!, $second: String!) {\n    first: apps(domain: $first) { name versions { version } multimediaReferences { path present } multimedia { md5 } }\n    second: apps(domain: $second) { name versions { version } multimediaReferences { path present } multimedia { md5 } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApolloSortedCases($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after) {\n      totalCount\n      edges { cursor node { id caseId caseName dateClosed } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query ApolloSortedCases($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after) {\n      totalCount\n      edges { cursor node { id caseId caseName dateClosed } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query CountedCases($domain: String!, $first: Int!, $caseType: [String!]) {\n    cases(domain: $domain, first: $first, filter: { caseType: $caseType }) {\n      totalCount\n      nodes {\n        caseId\n      }\n    }\n  }\n"): (typeof documents)["\n  query CountedCases($domain: String!, $first: Int!, $caseType: [String!]) {\n    cases(domain: $domain, first: $first, filter: { caseType: $caseType }) {\n      totalCount\n      nodes {\n        caseId\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PagedCases($domain: String!, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, first: $first, after: $after, last: $last, before: $before, filter: { caseType: [\"patient\"] }) {\n      totalCount\n      nodes {\n        caseId\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n"): (typeof documents)["\n  query PagedCases($domain: String!, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, first: $first, after: $after, last: $last, before: $before, filter: { caseType: [\"patient\"] }) {\n      totalCount\n      nodes {\n        caseId\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConnCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { caseId } }\n      nodes { caseId }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query ConnCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { caseId } }\n      nodes { caseId }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrderedCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id caseId caseName dateOpened lastModified dateClosed } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query OrderedCasesPage($domain: String!, $filter: CaseFilter, $orderBy: CaseOrderBy, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id caseId caseName dateOpened lastModified dateClosed } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GqlCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { caseId caseName externalId properties closed } }\n  }\n"): (typeof documents)["\n  mutation GqlCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { caseId caseName externalId properties closed } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GqlUpdateCase($domain: String!, $caseId: ID!, $input: CaseInput!) {\n    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { caseName properties closed dateClosed } }\n  }\n"): (typeof documents)["\n  mutation GqlUpdateCase($domain: String!, $caseId: ID!, $input: CaseInput!) {\n    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { caseName properties closed dateClosed } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GqlUpsertCase($domain: String!, $externalId: String!, $input: CaseInput!) {\n    upsertCase(domain: $domain, externalId: $externalId, input: $input) { case { caseId caseName } }\n  }\n"): (typeof documents)["\n  mutation GqlUpsertCase($domain: String!, $externalId: String!, $input: CaseInput!) {\n    upsertCase(domain: $domain, externalId: $externalId, input: $input) { case { caseId caseName } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GqlBulkWrite($domain: String!, $items: [CaseBulkItem!]!) {\n    bulkWriteCases(domain: $domain, items: $items) { xformId cases { caseId caseName parent { caseId } } }\n  }\n"): (typeof documents)["\n  mutation GqlBulkWrite($domain: String!, $items: [CaseBulkItem!]!) {\n    bulkWriteCases(domain: $domain, items: $items) { xformId cases { caseId caseName parent { caseId } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlCasesPage($domain: String!, $filter: CaseFilter, $first: Int, $after: String) {\n    cases(domain: $domain, filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      nodes { caseId caseName }\n    }\n  }\n"): (typeof documents)["\n  query GqlCasesPage($domain: String!, $filter: CaseFilter, $first: Int, $after: String) {\n    cases(domain: $domain, filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      nodes { caseId caseName }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlCasesWithRelations($domain: String!, $first: Int) {\n    cases(domain: $domain, first: $first, filter: { caseType: [\"visit\"] }) {\n      nodes {\n        caseId\n        parent { caseId caseName }\n        indices { name relationship case { caseId } }\n        openedBy { username }\n      }\n    }\n  }\n"): (typeof documents)["\n  query GqlCasesWithRelations($domain: String!, $first: Int) {\n    cases(domain: $domain, first: $first, filter: { caseType: [\"visit\"] }) {\n      nodes {\n        caseId\n        parent { caseId caseName }\n        indices { name relationship case { caseId } }\n        openedBy { username }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlRelations($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) {\n      caseName\n      children { caseName }\n      extensions { caseName }\n      host { caseName }\n      forms { id formId username deviceId xmlns caseIds }\n    }\n  }\n"): (typeof documents)["\n  query GqlRelations($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) {\n      caseName\n      children { caseName }\n      extensions { caseName }\n      host { caseName }\n      forms { id formId username deviceId xmlns caseIds }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {\n      matchingRecords missingRecords entries { by requestedId case { caseName } }\n    }\n  }\n"): (typeof documents)["\n  query GqlByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {\n      matchingRecords missingRecords entries { by requestedId case { caseName } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlByExternal($domain: String!, $externalId: String!) {\n    caseByExternalId(domain: $domain, externalId: $externalId) { caseName }\n  }\n"): (typeof documents)["\n  query GqlByExternal($domain: String!, $externalId: String!) {\n    caseByExternalId(domain: $domain, externalId: $externalId) { caseName }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlForm($domain: String!, $formId: ID!) {\n    form(domain: $domain, formId: $formId) { formId xmlns username xml problem caseIds }\n  }\n"): (typeof documents)["\n  query GqlForm($domain: String!, $formId: ID!) {\n    form(domain: $domain, formId: $formId) { formId xmlns username xml problem caseIds }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApolloIdsByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {\n      matchingRecords\n      missingRecords\n      entries { by requestedId case { id caseId caseName openedBy { userId username } } }\n    }\n  }\n"): (typeof documents)["\n  query ApolloIdsByIds($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) {\n      matchingRecords\n      missingRecords\n      entries { by requestedId case { id caseId caseName openedBy { userId username } } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApolloIdsCaseReads($domain: String!, $caseId: ID!, $externalId: String!, $id: ID!) {\n    cases(domain: $domain, first: 100) { nodes { id caseId caseName openedBy { userId username } } }\n    case(domain: $domain, caseId: $caseId) { id caseName openedBy { userId username } parent { id openedBy { userId username } } }\n    caseByExternalId(domain: $domain, externalId: $externalId) { id caseName openedBy { userId username } }\n    node(id: $id) { id ... on Case { caseName openedBy { userId username } } }\n  }\n"): (typeof documents)["\n  query ApolloIdsCaseReads($domain: String!, $caseId: ID!, $externalId: String!, $id: ID!) {\n    cases(domain: $domain, first: 100) { nodes { id caseId caseName openedBy { userId username } } }\n    case(domain: $domain, caseId: $caseId) { id caseName openedBy { userId username } parent { id openedBy { userId username } } }\n    caseByExternalId(domain: $domain, externalId: $externalId) { id caseName openedBy { userId username } }\n    node(id: $id) { id ... on Case { caseName openedBy { userId username } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApolloIdsCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId caseName openedBy { userId username } } }\n  }\n"): (typeof documents)["\n  mutation ApolloIdsCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId caseName openedBy { userId username } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApolloIdsApiKeys($first: String!, $second: String!) {\n    first: apiKeys(username: $first) { id keyId username name prefix revokedAt }\n    second: apiKeys(username: $second) { id keyId username name prefix revokedAt }\n  }\n"): (typeof documents)["\n  query ApolloIdsApiKeys($first: String!, $second: String!) {\n    first: apiKeys(username: $first) { id keyId username name prefix revokedAt }\n    second: apiKeys(username: $second) { id keyId username name prefix revokedAt }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApolloIdsCreateApiKey($username: String!, $name: String) {\n    createApiKey(username: $username, name: $name) { key apiKey { id keyId username name prefix revokedAt } }\n  }\n"): (typeof documents)["\n  mutation ApolloIdsCreateApiKey($username: String!, $name: String) {\n    createApiKey(username: $username, name: $name) { key apiKey { id keyId username name prefix revokedAt } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApolloIdsRevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id keyId revokedAt }\n  }\n"): (typeof documents)["\n  mutation ApolloIdsRevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id keyId revokedAt }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApolloCasePage($domain: String!, $filter: CaseFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id caseId caseName } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query ApolloCasePage($domain: String!, $filter: CaseFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    cases(domain: $domain, filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { id caseId caseName } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApolloRenameCase($domain: String!, $caseId: ID!, $input: CaseInput!) {\n    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { id caseName } }\n  }\n"): (typeof documents)["\n  mutation ApolloRenameCase($domain: String!, $caseId: ID!, $input: CaseInput!) {\n    updateCase(domain: $domain, caseId: $caseId, input: $input) { case { id caseName } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription UrqlCaseChanged($domain: String!, $caseType: String) {\n    caseChanged(domain: $domain, caseType: $caseType) { caseId caseType domain formId }\n  }\n"): (typeof documents)["\n  subscription UrqlCaseChanged($domain: String!, $caseType: String) {\n    caseChanged(domain: $domain, caseType: $caseType) { caseId caseType domain formId }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UrqlCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId } }\n  }\n"): (typeof documents)["\n  mutation UrqlCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UrqlCaseCount($domain: String!, $filter: CaseFilter) {\n    cases(domain: $domain, filter: $filter, first: 1) { totalCount }\n  }\n"): (typeof documents)["\n  query UrqlCaseCount($domain: String!, $filter: CaseFilter) {\n    cases(domain: $domain, filter: $filter, first: 1) { totalCount }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GlobalIdsApiKeys($username: String!) {\n    apiKeys(username: $username) { id keyId prefix revokedAt }\n  }\n"): (typeof documents)["\n  query GlobalIdsApiKeys($username: String!) {\n    apiKeys(username: $username) { id keyId prefix revokedAt }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GlobalIdsCreateApiKey($username: String!) {\n    createApiKey(username: $username) { key apiKey { id keyId username } }\n  }\n"): (typeof documents)["\n  mutation GlobalIdsCreateApiKey($username: String!) {\n    createApiKey(username: $username) { key apiKey { id keyId username } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GlobalIdsRevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id keyId revokedAt }\n  }\n"): (typeof documents)["\n  mutation GlobalIdsRevokeApiKey($id: ID!) {\n    revokeApiKey(id: $id) { id keyId revokedAt }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GlobalIdsApiKeyNode($id: ID!) {\n    node(id: $id) { __typename id ... on ApiKey { keyId username prefix } }\n  }\n"): (typeof documents)["\n  query GlobalIdsApiKeyNode($id: ID!) {\n    node(id: $id) { __typename id ... on ApiKey { keyId username prefix } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GlobalIdsCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { case { caseId externalId openedBy { userId username } } }\n  }\n"): (typeof documents)["\n  mutation GlobalIdsCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { case { caseId externalId openedBy { userId username } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GlobalIdsFetchEntries($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) { entries { by requestedId case { caseId } } }\n  }\n"): (typeof documents)["\n  query GlobalIdsFetchEntries($domain: String!, $caseIds: [String!], $externalIds: [String!]) {\n    casesByIds(domain: $domain, caseIds: $caseIds, externalIds: $externalIds) { entries { by requestedId case { caseId } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GlobalIdsFormOfCase($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) { forms { userId } }\n  }\n"): (typeof documents)["\n  query GlobalIdsFormOfCase($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) { forms { userId } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation NodeCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId } }\n  }\n"): (typeof documents)["\n  mutation NodeCreateCase($domain: String!, $input: CaseInput!) {\n    createCase(domain: $domain, input: $input) { xformId case { id caseId } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Case { caseId caseName }\n      ... on Form { formId caseIds }\n    }\n  }\n"): (typeof documents)["\n  query NodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Case { caseId caseName }\n      ... on Form { formId caseIds }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NodesByIds($ids: [ID!]!) {\n    nodes(ids: $ids) { __typename id }\n  }\n"): (typeof documents)["\n  query NodesByIds($ids: [ID!]!) {\n    nodes(ids: $ids) { __typename id }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NodeCaseForms($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) { id forms { id formId } }\n  }\n"): (typeof documents)["\n  query NodeCaseForms($domain: String!, $caseId: ID!) {\n    case(domain: $domain, caseId: $caseId) { id forms { id formId } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LocationConnectionPage(\n    $domain: String!\n    $filter: LocationFilter\n    $orderBy: LocationOrderBy\n    $first: Int\n    $after: String\n    $last: Int\n    $before: String\n  ) {\n    locations(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { locationId name } }\n      nodes { locationId }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query LocationConnectionPage(\n    $domain: String!\n    $filter: LocationFilter\n    $orderBy: LocationOrderBy\n    $first: Int\n    $after: String\n    $last: Int\n    $before: String\n  ) {\n    locations(domain: $domain, filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges { cursor node { locationId name } }\n      nodes { locationId }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlLocationTree($domain: String!, $id: ID!, $depth: Int) {\n    location(domain: $domain, locationId: $id) {\n      name\n      locationType { code parentCode }\n      parent { name }\n      children { name }\n      ancestors { name }\n      descendants(depth: $depth) { name }\n    }\n  }\n"): (typeof documents)["\n  query GqlLocationTree($domain: String!, $id: ID!, $depth: Int) {\n    location(domain: $domain, locationId: $id) {\n      name\n      locationType { code parentCode }\n      parent { name }\n      children { name }\n      ancestors { name }\n      descendants(depth: $depth) { name }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlLocationFirstOfTree($domain: String!, $id: ID!, $first: Int) {\n    location(domain: $domain, locationId: $id) {\n      children(first: $first) { name children(first: $first) { name } }\n      descendants(first: $first) { name }\n    }\n  }\n"): (typeof documents)["\n  query GqlLocationFirstOfTree($domain: String!, $id: ID!, $first: Int) {\n    location(domain: $domain, locationId: $id) {\n      children(first: $first) { name children(first: $first) { name } }\n      descendants(first: $first) { name }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlLocationPage($domain: String!, $filter: LocationFilter, $first: Int, $after: String) {\n    locations(domain: $domain, filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      nodes { name siteCode parent { name } ancestors { name } locationType { code } }\n    }\n  }\n"): (typeof documents)["\n  query GqlLocationPage($domain: String!, $filter: LocationFilter, $first: Int, $after: String) {\n    locations(domain: $domain, filter: $filter, first: $first, after: $after) {\n      totalCount\n      pageInfo { hasNextPage endCursor }\n      nodes { name siteCode parent { name } ancestors { name } locationType { code } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GqlCreateLocation($domain: String!, $input: LocationInput!) {\n    createLocation(domain: $domain, input: $input) { locationId name siteCode parentLocationId }\n  }\n"): (typeof documents)["\n  mutation GqlCreateLocation($domain: String!, $input: LocationInput!) {\n    createLocation(domain: $domain, input: $input) { locationId name siteCode parentLocationId }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GqlUpdateLocation($domain: String!, $id: ID!, $input: LocationInput!) {\n    updateLocation(domain: $domain, locationId: $id, input: $input) { name }\n  }\n"): (typeof documents)["\n  mutation GqlUpdateLocation($domain: String!, $id: ID!, $input: LocationInput!) {\n    updateLocation(domain: $domain, locationId: $id, input: $input) { name }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GqlBulkLocations($domain: String!, $items: [LocationBulkItem!]!) {\n    bulkLocations(domain: $domain, items: $items)\n  }\n"): (typeof documents)["\n  mutation GqlBulkLocations($domain: String!, $items: [LocationBulkItem!]!) {\n    bulkLocations(domain: $domain, items: $items)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query GqlBySiteCode($domain: String!, $siteCode: String!) {\n    locationBySiteCode(domain: $domain, siteCode: $siteCode) { name }\n  }\n"): (typeof documents)["\n  query GqlBySiteCode($domain: String!, $siteCode: String!) {\n    locationBySiteCode(domain: $domain, siteCode: $siteCode) { name }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GqlUpdateLocationType($domain: String!, $code: String!, $name: String, $parentCode: String) {\n    updateLocationType(domain: $domain, code: $code, name: $name, parentCode: $parentCode) { code name parentCode }\n  }\n"): (typeof documents)["\n  mutation GqlUpdateLocationType($domain: String!, $code: String!, $name: String, $parentCode: String) {\n    updateLocationType(domain: $domain, code: $code, name: $name, parentCode: $parentCode) { code name parentCode }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation GqlDeleteLocationType($domain: String!, $code: String!) {\n    deleteLocationType(domain: $domain, code: $code)\n  }\n"): (typeof documents)["\n  mutation GqlDeleteLocationType($domain: String!, $code: String!) {\n    deleteLocationType(domain: $domain, code: $code)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LocationNodeIds($domain: String!, $locationId: ID!) {\n    location(domain: $domain, locationId: $locationId) { id locationId locationType { id code } }\n    locationTypes(domain: $domain) { id code }\n  }\n"): (typeof documents)["\n  query LocationNodeIds($domain: String!, $locationId: ID!) {\n    location(domain: $domain, locationId: $locationId) { id locationId locationType { id code } }\n    locationTypes(domain: $domain) { id code }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LocationNodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Location { locationId name locationType { code } }\n      ... on LocationType { code name parentCode }\n    }\n  }\n"): (typeof documents)["\n  query LocationNodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Location { locationId name locationType { code } }\n      ... on LocationType { code name parentCode }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OrderedLocationsPage($domain: String!, $orderBy: LocationOrderBy, $first: Int, $after: String) {\n    locations(domain: $domain, filter: { locationTypeCode: \"facility\" }, orderBy: $orderBy, first: $first, after: $after) {\n      totalCount\n      edges { cursor node { locationId name siteCode } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query OrderedLocationsPage($domain: String!, $orderBy: LocationOrderBy, $first: Int, $after: String) {\n    locations(domain: $domain, filter: { locationTypeCode: \"facility\" }, orderBy: $orderBy, first: $first, after: $after) {\n      totalCount\n      edges { cursor node { locationId name siteCode } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ObjectStoreFiles($domain: String!, $appId: ID!) {\n    app(domain: $domain, appId: $appId) {\n      multimedia {\n        sha256\n        size\n        contentType\n        downloadUrl\n      }\n    }\n  }\n"): (typeof documents)["\n  query ObjectStoreFiles($domain: String!, $appId: ID!) {\n    app(domain: $domain, appId: $appId) {\n      multimedia {\n        sha256\n        size\n        contentType\n        downloadUrl\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;