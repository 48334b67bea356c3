// The tests' own football data (test/football-data/README.md): a few seasons of the five leagues and a
// year of international goal minutes, laid out as the full data is, so the model's loaders read it as
// they read the full data. The tests need nothing beside the checkout; the CLI's fits and backtests keep
// their default folder or --data (model/data-dir.ts).
import { fileURLToPath } from 'node:url';

export const testDataDir = fileURLToPath(new URL('../football-data', import.meta.url));
