// Values the service generates once and keeps (the service_settings table), such as the id of the demo
// organisation of the embedded default.
import type { Sql } from './connection.js';

export async function readSetting(sql: Sql, name: string): Promise<string | null> {
  const [row] = await sql<{ value: string }[]>`SELECT value FROM service_settings WHERE name = ${name}`;
  return row?.value ?? null;
}

export async function writeSetting(sql: Sql, name: string, value: string): Promise<void> {
  await sql`INSERT INTO service_settings (name, value) VALUES (${name}, ${value})`;
}
