/**
 * Named scenario data for the location service tier (test/locations/location.service.test.ts): a
 * small tree over the test types (helpers/locations.ts), and the writes each CONTRACT §3 rule that
 * needs the database refuses, with the DomainError it refuses them with.
 */
import type { LocationFields } from "../../src/locations/location.model.ts";
import { badInput, type Refusal } from "../helpers/errors.ts";

/** The tree the scenarios write against: Brazil > Bahia > Salvador > Clinic, and a zone. */
export interface Tree {
  brazil: string;
  bahia: string;
  salvador: string;
  clinic: string;
  zone: string;
}

export const TREE_FIELDS = {
  brazil: { name: "Brazil", typeCode: "country", siteCode: "br" },
  bahia: { name: "Bahia", typeCode: "state", parent: "brazil" },
  salvador: { name: "Salvador", typeCode: "district", parent: "bahia" },
  clinic: { name: "Clinic", typeCode: "facility", parent: "salvador" },
  zone: { name: "North", typeCode: "zone" },
} as const;

export interface WriteScenario {
  /** the fields of a create, given the tree's ids */
  fields: (tree: Tree) => LocationFields;
  refused: Refusal;
}

/** Creates that the rules needing the database refuse, by rule. */
export const REFUSED_CREATES: Record<string, WriteScenario> = {
  "the type must exist in the domain": {
    fields: () => ({ name: "X", typeCode: "province" }),
    refused: badInput("LocationType 'province' not found"),
  },
  "type codes are case-sensitive": {
    fields: () => ({ name: "X", typeCode: "Country" }),
    refused: badInput("LocationType 'Country' not found"),
  },
  "a root must be of a root type": {
    fields: () => ({ name: "X", typeCode: "state" }),
    refused: badInput("Location type not valid for the selected parent."),
  },
  "a root type cannot go under a parent": {
    fields: (tree) => ({ name: "X", typeCode: "country", parentId: tree.brazil }),
    refused: badInput("Location type not valid for the selected parent."),
  },
  "a child must be of its parent's child type": {
    fields: (tree) => ({ name: "X", typeCode: "district", parentId: tree.brazil }),
    refused: badInput("Location type not valid for the selected parent."),
  },
  "a parent whose type has no child types takes no children": {
    fields: (tree) => ({ name: "X", typeCode: "facility", parentId: tree.clinic }),
    refused: badInput("The selected parent location cannot have child locations!"),
  },
  "the parent must exist in the domain": {
    fields: () => ({ name: "X", typeCode: "state", parentId: "00000000-0000-4000-8000-000000000000" }),
    refused: badInput("Could not find parent location with the given ID."),
  },
  "a parent id that is no UUID names no parent": {
    fields: () => ({ name: "X", typeCode: "state", parentId: "brazil" }),
    refused: badInput("Could not find parent location with the given ID."),
  },
  "siblings have different names": {
    fields: (tree) => ({ name: "Bahia", typeCode: "state", parentId: tree.brazil }),
    refused: badInput("Location with same name and parent already exists."),
  },
  "two roots have different names, whatever their types": {
    fields: () => ({ name: "Brazil", typeCode: "zone" }),
    refused: badInput("Location with same name and parent already exists."),
  },
  "a site code has no spaces or special characters": {
    fields: () => ({ name: "X", typeCode: "zone", siteCode: "two words" }),
    refused: badInput("The site code cannot contain spaces or special characters."),
  },
  "a site code is unique in the domain, in any case": {
    fields: () => ({ name: "X", typeCode: "zone", siteCode: "BR" }),
    refused: badInput("another location already uses this site code"),
  },
  "the value rules come first: a create needs a name and a type": {
    fields: () => ({ typeCode: "province" }),
    refused: badInput("'name' and 'location_type_code' are required fields when creating a new location."),
  },
};
