// The `include` query parameter of the result path, GET /v1/simulations/{id} and a batch's NDJSON results
// (docs/api.md §2.3, "Choosing sections"): the simulation document with only the sections asked for, in
// the document's own (wire) order. One pure function of the stored document, applied where the response
// is serialised; what is stored, delivered and charged does not change.
import { simulationDocumentSchema } from '../../engine/document-schema.js';
import { documentText, type StoredDocument } from '../../engine/stored-document.js';

/** The document's sections in wire order: every field but `schema`, which every answer keeps. */
export const DOCUMENT_SECTIONS: readonly string[] = Object.keys(simulationDocumentSchema.shape).filter(
  (field) => field !== 'schema',
);

const KNOWN = new Set(DOCUMENT_SECTIONS);

/** Whether `value` is a comma-separated list of known sections (the query schema's check). */
export function isSectionList(value: string): boolean {
  const names = value.split(',');
  return names.length > 0 && names.every((name) => KNOWN.has(name));
}

/** The sections a request asks for; null (every section) when it names none. */
export function includedSections(include: string | undefined): ReadonlySet<string> | null {
  if (include === undefined) return null;
  const names = new Set(include.split(','));
  // Asking for every section is the document as stored: no work, the same bytes.
  return DOCUMENT_SECTIONS.every((name) => names.has(name)) ? null : names;
}

/**
 * The stored document's JSON text with only `schema` and the sections in `include`, in the document's
 * order; the stored document itself when `include` is null. The stored text was written by
 * JSON.stringify, so the sections kept are the same bytes as in the whole document.
 */
export function selectSections(
  stored: StoredDocument,
  include: ReadonlySet<string> | null,
): StoredDocument | string {
  if (include === null) return stored;
  const document = JSON.parse(documentText(stored)) as Record<string, unknown>;
  const chosen: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(document)) {
    if (field === 'schema' || include.has(field)) chosen[field] = value;
  }
  return JSON.stringify(chosen);
}
