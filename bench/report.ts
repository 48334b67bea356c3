// One row per figure: what was measured, its value, and the reference measured in the same run.
export interface BenchRow {
  group: string;
  name: string;
  value: number;
  unit: string;
  reference?: { name: string; value: number } | undefined;
  note?: string | undefined;
}

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
