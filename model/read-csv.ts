// A small RFC 4180 reader: the data files are plain comma-separated text, a few scorer names are
// quoted because they hold commas. Pulling in a CSV package for that is not worth a dependency.

/** Rows of a CSV text as records keyed by the header line. Empty cells come back as ''. */
export function parseCsv(text: string): Record<string, string>[] {
  const { header, rows } = parseCsvLines(text);
  return rows.map(({ cells }) => {
    const record: Record<string, string> = {};
    header.forEach((name, index) => {
      record[name] = cells[index] ?? '';
    });
    return record;
  });
}

/** A CSV row with the line it starts on (1 = the header), for errors that point into the file. */
export interface CsvRow {
  line: number;
  cells: string[];
}

/** A row whose every cell is empty (spreadsheets leave lines of bare commas at the end of a file). */
export function isBlankRow(row: CsvRow): boolean {
  return row.cells.every((cell) => cell.trim() === '');
}

/** The header's cells and the rows after it; blank lines are left out. */
export function parseCsvLines(text: string): { header: string[]; rows: CsvRow[] } {
  const rows = splitRows(text.startsWith('\uFEFF') ? text.slice(1) : text);
  const header = rows.shift();
  if (!header) return { header: [], rows: [] };
  return {
    header: header.cells,
    rows: rows.filter((row) => !(row.cells.length === 1 && row.cells[0] === '')),
  };
}

function splitRows(text: string): CsvRow[] {
  const rows: CsvRow[] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
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
        if (ch === '\n') line++;
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
      rows.push({ line: rowLine, cells: row });
      row = [];
      cell = '';
      line++;
      rowLine = line;
    } else {
      cell += ch;
    }
  }
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push({ line: rowLine, cells: row });
  }
  return rows;
}
