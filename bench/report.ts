// One row per figure: what was measured, its value, and the reference measured in the same run.
import { writeFileSync } from 'node:fs';

export interface BenchRow {
  group: string;
  name: string;
  value: number;
  unit: string;
  reference?: { name: string; value: number } | undefined;
  note?: string | undefined;
  /**
   * Figures behind the row as numbers (e.g. `cpu_ms_per_job` by thread kind and phase), written to
   * BENCH_JSON beside `value` so that a check reads them rather than the note.
   */
  fields?: Record<string, unknown> | undefined;
}

/** The p-th percentile of ascending `sorted` (the value at that rank; 0 when empty). */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/** `value` to `digits` decimals, for figures written to JSON. */
export const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

function format(value: number): string {
  if (value >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toPrecision(3);
}

export function printRows(rows: BenchRow[]) {
  let group = '';
  for (const row of rows) {
    if (row.group !== group) {
      group = row.group;
      console.log(`\n## ${group}`);
    }
    const reference = row.reference
      ? `   | reference ${row.reference.name}: ${format(row.reference.value)} ${row.unit} (ratio ${(row.value / row.reference.value).toFixed(2)})`
      : '';
    console.log(
      `${row.name.padEnd(58)} ${format(row.value).padStart(12)} ${row.unit}${reference}${row.note ? `   [${row.note}]` : ''}`,
    );
  }
}

/**
 * Every row as one JSON object (name, value, unit, reference name and value, ratio) to the file named by
 * BENCH_JSON, so that figures can be compared from run to run; a row's `fields` follow as its own keys.
 */
export function writeJsonRows(rows: BenchRow[], file: string | undefined): void {
  if (!file) return;
  const objects = rows.map((row) => ({
    group: row.group,
    name: row.name.trim(),
    value: row.value,
    unit: row.unit,
    reference_name: row.reference?.name ?? null,
    reference_value: row.reference?.value ?? null,
    ratio: row.reference ? row.value / row.reference.value : null,
    note: row.note ?? null,
    ...row.fields,
  }));
  writeFileSync(file, `${JSON.stringify(objects, null, 2)}\n`);
}
