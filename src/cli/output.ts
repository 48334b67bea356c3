// What the CLI prints for people (without --json): lists as aligned tables, one object as a column of
// fields. The JSON views (src/operations/views.ts) are the source; this only lays them out.

type Row = Record<string, unknown>;

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cell).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Rows under a header, columns padded to their widest cell. */
export function table(rows: readonly Row[], columns: ReadonlyArray<readonly [string, string]>): string {
  if (rows.length === 0) return '(none)';
  const lines = [
    columns.map(([header]) => header),
    ...rows.map((row) => columns.map(([, key]) => cell(row[key]))),
  ];
  const widths = columns.map((_, i) => Math.max(...lines.map((line) => line[i]!.length)));
  return lines
    .map((line) =>
      line
        .map((text, i) => (i === line.length - 1 ? text : text.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** One object as `field  value` lines; nested objects stay JSON on their line. */
export function fields(object: Row, skip: readonly string[] = ['object']): string {
  const entries = Object.entries(object).filter(([key]) => !skip.includes(key));
  const width = Math.max(0, ...entries.map(([key]) => key.length));
  return entries.map(([key, value]) => `${key.padEnd(width)}  ${cell(value)}`).join('\n');
}

export const ORG_COLUMNS = [
  ['ORG', 'org_id'],
  ['NAME', 'name'],
  ['PLAN', 'plan'],
  ['ACTIVE', 'plan_active'],
  ['STATUS', 'status'],
  ['SPEND CAP', 'spend_cap_credits'],
  ['CREATED', 'created_at'],
] as const;

export const KEY_COLUMNS = [
  ['KEY', 'key_id'],
  ['MODE', 'mode'],
  ['PREFIX', 'secret_prefix'],
  ['SCOPES', 'scopes'],
  ['IP ALLOWLIST', 'ip_allowlist'],
  ['EXPIRES', 'expires_at'],
  ['REVOKED', 'revoked_at'],
  ['CREATED', 'created_at'],
] as const;
