// A small RFC 4180 reader: the data files are plain comma-separated text, a few scorer names are
// quoted because they hold commas. Pulling in a CSV package for that is not worth a dependency.

/** Rows of a CSV text as records keyed by the header line. Empty cells come back as ''. */
export function parseCsv(text: string): Record<string, string>[] {
  const rows = splitRows(text);
  const header = rows.shift();
  if (!header) return [];
  const records: Record<string, string>[] = [];
  for (const cells of rows) {
    if (cells.length === 1 && cells[0] === '') continue;
    const record: Record<string, string> = {};
    header.forEach((name, index) => {
      record[name] = cells[index] ?? '';
    });
    records.push(record);
  }
  return records;
}

function splitRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        cell += ch;
      }
    } else if (ch === '"') {
      quoted = true;
    } else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else {
      cell += ch;
    }
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}
