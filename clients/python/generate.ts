// The Python client's generated modules from the customer OpenAPI document (docs/openapi/openapi.json),
// the same document the TypeScript client's types come from (clients/typescript/generate.ts):
//   src/matchsim/models.py      a class per response object (attribute access over the JSON as received,
//                               so `to_dict()` gives it back exactly and fields unknown to this version
//                               are kept), a TypedDict per request object;
//   src/matchsim/_resources.py  a method per operation, grouped by resource (OPERATIONS below), its path,
//                               query and body parameters typed from the document.
// Used by `npm run client:generate` (scripts/openapi.ts) and by the test that fails when the committed
// files are stale (test/clients/python-package.test.ts). Hand-written parts (transport, errors, frames,
// webhooks) live beside them in src/matchsim and are not generated.

/** The generated modules, relative to the repository's root. */
export const PYTHON_MODELS = 'clients/python/src/matchsim/models.py';
export const PYTHON_RESOURCES = 'clients/python/src/matchsim/_resources.py';

interface Schema {
  $ref?: string;
  /** One type, or several (`["string", "null"]`): read as an anyOf of each. */
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema | boolean;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  description?: string;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}

interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/**
 * Where each operation lives on the client: resource, method, and how its answer is read. `wait`: a 202
 * is followed through its result path (the named operation) to the 200; `pages`: a list iterated page
 * after page by `starting_after`; `fixture_pages`: the fixture list, paged by its window; `stream`: an
 * NDJSON stream read line by line. An operation of the document missing here stops the generation.
 */
const OPERATIONS: Record<string, { resource: string; method: string; read?: string; follow?: string }> = {
  getCreditBalance: { resource: 'credits', method: 'get' },
  getCreditsLowThreshold: { resource: 'credits', method: 'low_threshold' },
  setCreditsLowThreshold: { resource: 'credits', method: 'set_low_threshold' },
  listFixtures: { resource: 'fixtures', method: 'list', read: 'fixture_pages' },
  getFixtureSquads: { resource: 'fixtures', method: 'squads' },
  getExpectedLineup: { resource: 'fixtures', method: 'expected_lineup' },
  impliedProbabilities: { resource: 'odds', method: 'implied' },
  quoteSimulation: { resource: 'quotes', method: 'create' },
  quoteSimulationPath: { resource: 'quotes', method: 'create_path' },
  quoteProjection: { resource: 'quotes', method: 'create_projection' },
  runSimulation: { resource: 'simulations', method: 'create', read: 'wait', follow: 'getSimulationJob' },
  getSimulation: { resource: 'simulations', method: 'retrieve' },
  getSimulationJob: { resource: 'simulations', method: 'job' },
  listSimulationJobs: { resource: 'simulations', method: 'jobs', read: 'pages' },
  createBatch: { resource: 'batches', method: 'create' },
  getBatch: { resource: 'batches', method: 'retrieve' },
  getBatchSummary: { resource: 'batches', method: 'summary' },
  streamSimulationBatchResults: { resource: 'batches', method: 'results', read: 'stream' },
  cancelSimulationBatch: { resource: 'batches', method: 'cancel' },
  listSimulationBatches: { resource: 'batches', method: 'list', read: 'pages' },
  createSimulationPath: { resource: 'paths', method: 'create' },
  runProjection: { resource: 'projections', method: 'create', read: 'wait', follow: 'getProjectionJob' },
  getProjectionJob: { resource: 'projections', method: 'job' },
  getProjection: { resource: 'projections', method: 'retrieve' },
  createWebhookEndpoint: { resource: 'webhook_endpoints', method: 'create' },
  listWebhookEndpoints: { resource: 'webhook_endpoints', method: 'list', read: 'pages' },
  getWebhookEndpoint: { resource: 'webhook_endpoints', method: 'retrieve' },
  updateWebhookEndpoint: { resource: 'webhook_endpoints', method: 'update' },
  deleteWebhookEndpoint: { resource: 'webhook_endpoints', method: 'delete' },
  rotateWebhookEndpointSecret: { resource: 'webhook_endpoints', method: 'rotate_secret' },
  listEvents: { resource: 'events', method: 'list', read: 'pages' },
  getEvent: { resource: 'events', method: 'retrieve' },
  resendEvent: { resource: 'events', method: 'resend' },
};

/** Classes that take a hand-written mixin of src/matchsim/_frames.py (a DataFrame of their content). */
const MIXINS: Record<string, string> = {
  SimulationDocumentMarkets: 'MarketsFrame',
  SimulationDocumentSectionsMarkets: 'MarketsFrame',
};

/** A simulation's document sections read on the simulation itself: `sim.result` for `sim.simulation.result`. */
const SHORTCUTS: Record<string, string> = { Simulation: 'simulation', SimulationRead: 'simulation' };

/** JSON names that are no Python identifier, by a name that reads (the rest: `/` and `.` become `_`). */
const RENAMED: Record<string, string> = { '1x2': 'one_x_two' };
const KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);

export function pythonName(json: string): string {
  const name = RENAMED[json] ?? json.replace(/[^A-Za-z0-9_]/g, '_');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`no Python name for the JSON name ${json}`);
  return KEYWORDS.has(name) ? `${name}_` : name;
}

const pascal = (name: string) =>
  pythonName(name)
    .split('_')
    .filter((part) => part !== '')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

const pythonValue = (value: unknown) =>
  value === true ? 'True' : value === false ? 'False' : value === null ? 'None' : JSON.stringify(value);
const literal = (values: unknown[]) => `Literal[${values.map(pythonValue).join(', ')}]`;

function docstring(text: string | undefined, indent: string): string {
  if (!text) return '';
  const clean = text.trim().replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"');
  const lines = clean.split('\n');
  if (lines.length === 1) return `${indent}"""${clean}"""\n`;
  return `${indent}"""${lines.map((line, i) => (i === 0 || line === '' ? line : indent + line)).join('\n')}\n${indent}"""\n`;
}

/** An anyOf/oneOf without its null member: the members, and whether null was one. */
function withoutNull(members: Schema[]): { members: Schema[]; nullable: boolean } {
  const rest = members.filter((member) => member.type !== 'null');
  return { members: rest, nullable: rest.length < members.length };
}

/** A schema of several types as the anyOf of one schema per type. */
function eachType(schema: Schema): Schema {
  const types = schema.type as string[];
  return { anyOf: types.map((type) => ({ ...schema, type })) };
}

class Generator {
  private readonly classes: string[] = [];
  private readonly typedDicts: string[] = [];
  private readonly taken = new Set<string>();
  private readonly componentModels = new Set<string>();
  private readonly componentParams = new Set<string>();
  /** Inline objects already given a class: a component walked twice (two operations' bodies) names them once. */
  private readonly inlineModels = new Map<Schema, string>();
  /** Components that are a request's body: their properties are a method's keywords, not a class. */
  private readonly bodies = new Set<string>();
  /** The classes of MIXINS met so far: one the document never made is an error of the table. */
  private readonly mixed = new Set<string>();
  private readonly inlineParams = new Map<Schema, string>();

  constructor(private readonly document: Document) {}

  private component(ref: string): [string, Schema] {
    const name = ref.replace('#/components/schemas/', '');
    const schema = this.document.components.schemas[name];
    if (!schema) throw new Error(`unknown reference ${ref}`);
    return [name, schema];
  }

  private claim(name: string): string {
    let unique = name;
    for (let n = 2; this.taken.has(unique); n++) unique = `${name}${n}`;
    this.taken.add(unique);
    return unique;
  }

  // ---- responses: a Model class per object, read lazily from the JSON as received -------------------

  /** The Python type of a response value, and how its raw JSON becomes it (null: used as it is). */
  private responseType(schema: Schema, name: string): { type: string; convert: string | null } {
    if (Array.isArray(schema.type)) return this.responseType(eachType(schema), name);
    if (schema.$ref) {
      const [component, target] = this.component(schema.$ref);
      if (target.type === 'object' && target.properties) {
        if (!this.componentModels.has(component)) {
          this.componentModels.add(component);
          this.taken.add(component);
          this.modelClass(component, target);
        }
        return { type: component, convert: component };
      }
      return this.responseType(target, name);
    }
    const union = schema.anyOf ?? schema.oneOf;
    if (union) {
      const { members, nullable } = withoutNull(union);
      // An open enum (its values, or any string): a str. Several objects (a document whole or in
      // sections): the one that requires least, which reads every one of them.
      let chosen = members;
      if (members.some((member) => member.type === 'string') && members.every((m) => m.type === 'string'))
        chosen = [{ type: 'string' }];
      const objects = members.filter((member) => this.isObject(member));
      if (objects.length > 1 && objects.length === members.length) {
        const required = (member: Schema) => this.resolve(member).required?.length ?? 0;
        chosen = [objects.reduce((least, member) => (required(member) < required(least) ? member : least))];
      }
      const types = chosen.map((member) => this.responseType(member, name));
      if (types.length === 1) {
        const [only] = types as [{ type: string; convert: string | null }];
        if (!nullable) return only;
        return {
          type: `Optional[${only.type}]`,
          convert: only.convert ? `lambda v: _optional(${only.convert}, v)` : null,
        };
      }
      if (types.some((t) => t.convert)) throw new Error(`a union of objects at ${name}`);
      const inner = `Union[${types.map((t) => t.type).join(', ')}]`;
      return { type: nullable ? `Optional[${inner}]` : inner, convert: null };
    }
    if (schema.const !== undefined) return { type: literal([schema.const]), convert: null };
    if (schema.enum) return { type: literal(schema.enum), convert: null };
    switch (schema.type) {
      case 'string':
        return { type: 'str', convert: null };
      case 'integer':
        return { type: 'int', convert: null };
      case 'number':
        return { type: 'float', convert: null };
      case 'boolean':
        return { type: 'bool', convert: null };
      case 'null':
        return { type: 'None', convert: null };
      case 'array': {
        const item = this.responseType(schema.items ?? {}, `${name}Item`);
        if (!item.convert) return { type: `List[${item.type}]`, convert: null };
        return { type: `ModelList[${item.type}]`, convert: `lambda v: _list(${item.convert}, v)` };
      }
      case 'object': {
        if (schema.properties) {
          let className = this.inlineModels.get(schema);
          if (!className) {
            className = this.claim(name);
            this.inlineModels.set(schema, className);
            this.modelClass(className, schema);
          }
          return { type: className, convert: className };
        }
        const extra = schema.additionalProperties;
        const value =
          typeof extra === 'object' && Object.keys(extra).length > 0
            ? this.responseType(extra, `${name}Value`)
            : { type: 'Any', convert: null };
        if (!value.convert) return { type: `Dict[str, ${value.type}]`, convert: null };
        return { type: `Dict[str, ${value.type}]`, convert: `lambda v: _map(${value.convert}, v)` };
      }
      default:
        return { type: 'Any', convert: null };
    }
  }

  private resolve(schema: Schema): Schema {
    return schema.$ref ? this.component(schema.$ref)[1] : schema;
  }

  private isObject(schema: Schema): boolean {
    const target = this.resolve(schema);
    return target.type === 'object' && target.properties !== undefined;
  }

  /** `convert` applied to an expression: a class is called, a lambda's body is written out. */
  private static apply(convert: string, expression: string): string {
    const lambda = /^lambda v: (\w+)\((.*), v\)$/.exec(convert);
    if (lambda) return `${lambda[1]}(${lambda[2]}, ${expression})`;
    return `${convert}(${expression})`;
  }

  private modelClass(className: string, schema: Schema): void {
    const properties = Object.entries(schema.properties ?? {});
    const required = new Set(schema.required ?? []);
    const members: string[] = [];
    const own = new Set<string>();
    for (const [json, property] of properties) {
      const python = pythonName(json);
      own.add(python);
      const value = this.responseType(property, `${className}${pascal(json)}`);
      const optional = !required.has(json);
      const type = optional && !value.type.startsWith('Optional[') ? `Optional[${value.type}]` : value.type;
      const raw = optional
        ? `self._data.get(${JSON.stringify(json)})`
        : `self._data[${JSON.stringify(json)}]`;
      let body: string;
      if (!value.convert) body = value.type === 'Any' ? raw : `cast('${type}', ${raw})`;
      else if (optional && !value.type.startsWith('Optional[')) body = `_optional(${value.convert}, ${raw})`;
      else body = Generator.apply(value.convert, raw);
      members.push(
        `    @property\n    def ${python}(self) -> ${type}:\n${docstring(property.description, '        ')}        return ${body}\n`,
      );
    }
    const via = SHORTCUTS[className];
    if (via) {
      const section = schema.properties?.[via];
      if (!section) throw new Error(`${className} has no ${via} to read sections from`);
      const sectionClass = this.responseType(section, `${className}${pascal(via)}`).type;
      const source = this.classes.find((text) => text.startsWith(`class ${sectionClass}(`));
      if (!source) throw new Error(`${className}.${via} is no object to read sections from`);
      for (const [, python, type] of source.matchAll(/ {4}def (\w+)\(self\) -> (.+):\n/g)) {
        if (own.has(python!)) continue;
        members.push(
          `    @property\n    def ${python}(self) -> ${type}:\n        """\`self.${pythonName(via)}.${python}\`: the document's section on the simulation itself."""\n        return self.${pythonName(via)}.${python}\n`,
        );
      }
    }
    const mixin = MIXINS[className];
    if (mixin) this.mixed.add(className);
    const bases = mixin ? `${mixin}, Model` : 'Model';
    const header = `class ${className}(${bases}):\n${docstring(schema.description ?? `\`${className}\` of the API.`, '    ')}`;
    this.classes.push(`${header}\n${members.join('\n')}`);
  }

  // ---- requests: TypedDicts for the objects a body nests ---------------------------------------------

  private requestType(schema: Schema, name: string): string {
    if (Array.isArray(schema.type)) return this.requestType(eachType(schema), name);
    if (schema.$ref) {
      const [component, target] = this.component(schema.$ref);
      if (target.type === 'object' && target.properties) {
        const paramName = `${component}Param`;
        if (!this.componentParams.has(component)) {
          this.componentParams.add(component);
          this.taken.add(paramName);
          this.typedDict(paramName, target);
        }
        return paramName;
      }
      return this.requestType(target, name);
    }
    const union = schema.anyOf ?? schema.oneOf;
    if (union) {
      const { members, nullable } = withoutNull(union);
      const types = [...new Set(members.map((member, i) => this.requestType(member, `${name}${i + 1}`)))];
      const inner = types.length === 1 ? types[0]! : `Union[${types.join(', ')}]`;
      return nullable ? `Optional[${inner}]` : inner;
    }
    if (schema.const !== undefined) return literal([schema.const]);
    if (schema.enum) return literal(schema.enum);
    switch (schema.type) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'null':
        return 'None';
      case 'array':
        return `Sequence[${this.requestType(schema.items ?? {}, `${name}Item`)}]`;
      case 'object': {
        if (schema.properties) {
          let className = this.inlineParams.get(schema);
          if (!className) {
            className = this.claim(`${name}Param`);
            this.inlineParams.set(schema, className);
            this.typedDict(className, schema);
          }
          return className;
        }
        const extra = schema.additionalProperties;
        const value =
          typeof extra === 'object' && Object.keys(extra).length > 0
            ? this.requestType(extra, `${name}Value`)
            : 'Any';
        return `Mapping[str, ${value}]`;
      }
      default:
        return 'Any';
    }
  }

  /** A TypedDict; required keys on a base of its own (Python 3.9 has no `Required`). Keys stay JSON's. */
  private typedDict(className: string, schema: Schema): void {
    const required = new Set(schema.required ?? []);
    const entries = Object.entries(schema.properties ?? {}).map(([json, property]) => ({
      json,
      required: required.has(json),
      type: this.requestType(property, `${className.replace(/Param$/, '')}${pascal(json)}`),
    }));
    const field = (entry: { json: string; type: string }) =>
      /^[A-Za-z_]\w*$/.test(entry.json) && !KEYWORDS.has(entry.json)
        ? `    ${entry.json}: ${entry.type}\n`
        : null;
    const functional = entries.some((entry) => field(entry) === null);
    const doc = docstring(schema.description ?? `A request's \`${className}\`.`, '    ');
    const mandatory = entries.filter((entry) => entry.required);
    const optional = entries.filter((entry) => !entry.required);
    if (functional) {
      // Keys no identifier can spell (`1x2`): TypedDict's functional form, every key optional in it.
      const keys = entries.map((entry) => `${JSON.stringify(entry.json)}: ${entry.type}`).join(', ');
      this.typedDicts.push(`${className} = TypedDict("${className}", {${keys}}, total=False)\n`);
      return;
    }
    if (mandatory.length === 0) {
      this.typedDicts.push(
        `class ${className}(TypedDict, total=False):\n${doc}${optional.map(field).join('') || '    pass\n'}`,
      );
      return;
    }
    const base = `_${className}Required`;
    this.typedDicts.push(`class ${base}(TypedDict):\n${mandatory.map(field).join('')}`);
    this.typedDicts.push(
      `class ${className}(${base}, total=False):\n${doc}${optional.map(field).join('') || '    pass\n'}`,
    );
  }

  // ---- operations --------------------------------------------------------------------------------------

  private operations(): { path: string; method: string; operation: Operation }[] {
    return Object.entries(this.document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    );
  }

  private resources(): string {
    const byResource = new Map<string, string[]>();
    const table: string[] = [];
    for (const { path, method, operation } of this.operations()) {
      const place = OPERATIONS[operation.operationId];
      if (!place) throw new Error(`operation ${operation.operationId} has no place in OPERATIONS`);
      table.push(
        `    ${JSON.stringify(operation.operationId)}: (${JSON.stringify(method.toUpperCase())}, ${JSON.stringify(path)}),\n`,
      );
      const methods = byResource.get(place.resource) ?? [];
      methods.push(this.method(path, method.toUpperCase(), operation, place));
      byResource.set(place.resource, methods);
    }
    const missing = Object.keys(OPERATIONS).filter((id) => !table.some((line) => line.includes(`"${id}"`)));
    if (missing.length > 0) throw new Error(`OPERATIONS names operations the document lacks: ${missing}`);
    const classes = [...byResource].map(
      ([resource, methods]) =>
        `class ${pascal(resource)}:\n    """The \`${resource}\` operations."""\n\n    def __init__(self, transport: Transport) -> None:\n        self._transport = transport\n\n${methods.join('\n')}`,
    );
    const attributes = [...byResource.keys()]
      .map((resource) => `        self.${resource} = ${pascal(resource)}(transport)\n`)
      .join('');
    return `${classes.join('\n\n')}\n\nclass Resources:\n    """Every resource of the API, an attribute each."""\n\n    def __init__(self, transport: Transport) -> None:\n${attributes}\n\n#: Every operation of the document: its method and path template, by operationId.\nOPERATIONS: Dict[str, Tuple[str, str]] = {\n${table.join('')}}\n`;
  }

  private responseOf(operation: Operation, status: string): Schema | undefined {
    const content = operation.responses[status]?.content;
    if (!content) return undefined;
    return Object.values(content)[0]?.schema;
  }

  private method(
    path: string,
    httpMethod: string,
    operation: Operation,
    place: { method: string; read?: string; follow?: string },
  ): string {
    const args: string[] = [];
    const keywordRequired: string[] = [];
    const keywordOptional: string[] = [];
    const pathParams: string[] = [];
    const query: string[] = [];
    const body: string[] = [];
    let keyed = false;
    for (const parameter of operation.parameters ?? []) {
      const python = pythonName(parameter.name);
      if (parameter.in === 'path') {
        args.push(`${python}: ${this.requestType(parameter.schema, pascal(parameter.name))}`);
        pathParams.push(`${JSON.stringify(parameter.name)}: ${python}`);
      } else if (parameter.in === 'query') {
        if (place.read === 'pages' && parameter.name === 'starting_after') continue;
        const type = this.requestType(
          parameter.schema,
          `${pascal(operation.operationId)}${pascal(parameter.name)}`,
        );
        keywordOptional.push(`${python}: Union[${type}, NotGiven] = NOT_GIVEN`);
        query.push(`${JSON.stringify(parameter.name)}: ${python}`);
      } else if (parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key') {
        keyed = true;
      }
    }
    const bodySchema = operation.requestBody
      ? this.resolve(Object.values(operation.requestBody.content)[0]!.schema)
      : undefined;
    if (bodySchema) {
      const bodyRef = Object.values(operation.requestBody!.content)[0]!.schema.$ref;
      const bodyName = bodyRef ? this.component(bodyRef)[0] : `${pascal(operation.operationId)}Body`;
      this.bodies.add(bodyName);
      const required = new Set(bodySchema.required ?? []);
      for (const [json, property] of Object.entries(bodySchema.properties ?? {})) {
        const python = pythonName(json);
        const type = this.requestType(property, `${bodyName}${pascal(json)}`);
        if (required.has(json)) keywordRequired.push(`${python}: ${type}`);
        else keywordOptional.push(`${python}: Union[${type}, NotGiven] = NOT_GIVEN`);
        body.push(`${JSON.stringify(json)}: ${python}`);
      }
    }
    if (keyed) keywordOptional.push('idempotency_key: Optional[str] = None');
    const keywords = [...keywordRequired, ...keywordOptional];
    const signature = ['self', ...args, ...(keywords.length > 0 ? ['*', ...keywords] : [])];

    const successes = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
    const typeOf = (status: string) => {
      const schema = this.responseOf(operation, status);
      return schema ? this.responseType(schema, `${pascal(operation.operationId)}Response${status}`) : null;
    };
    const call = [
      `${JSON.stringify(operation.operationId)}`,
      ...(pathParams.length > 0 ? [`path={${pathParams.join(', ')}}`] : []),
      ...(query.length > 0 ? [`query={${query.join(', ')}}`] : []),
      ...(body.length > 0 ? [`body={${body.join(', ')}}`] : []),
      ...(keyed ? ['idempotency_key=idempotency_key'] : []),
    ].join(', ');
    let returns: string;
    let code: string;
    if (place.read === 'stream') {
      const item = typeOf('200')!;
      returns = `BatchResults[${item.type}]`;
      code = `        return BatchResults(self._transport, ${item.convert}, ${call})\n`;
    } else if (place.read === 'pages' || place.read === 'fixture_pages') {
      const list = this.resolve(this.responseOf(operation, '200')!);
      const item = this.responseType(list.properties!.data!.items!, 'unused');
      const cursor = ['id', 'job_id', 'batch_id'].find(
        (field) => this.resolve(list.properties!.data!.items!).properties?.[field],
      );
      returns = `Iterator[${item.type}]`;
      const pager = place.read === 'pages' ? `pages(${JSON.stringify(cursor)}, ` : 'fixture_pages(';
      code = `        for item in self._transport.${pager}${call}):\n            yield ${Generator.apply(item.convert!, 'item')}\n`;
    } else if (place.read === 'wait') {
      const final = typeOf('200')!;
      returns = final.type;
      code = `        answer = self._transport.request(${call})\n        return ${Generator.apply(final.convert!, `self._transport.follow(answer, ${JSON.stringify(place.follow)})`)}\n`;
    } else if (successes.length > 1) {
      const [first, second] = successes.map((status) => ({ status, read: typeOf(status)! }));
      returns = `Union[${first!.read.type}, ${second!.read.type}]`;
      code = `        answer = self._transport.request(${call})\n        if answer.status == ${second!.status}:\n            return ${Generator.apply(second!.read.convert!, 'answer.body')}\n        return ${Generator.apply(first!.read.convert!, 'answer.body')}\n`;
    } else {
      const read = typeOf(successes[0]!)!;
      returns = read.type;
      code = `        answer = self._transport.request(${call})\n        return ${read.convert ? Generator.apply(read.convert, 'answer.body') : `cast('${read.type}', answer.body)`}\n`;
    }
    const summary = [operation.summary, `\`${httpMethod} ${path}\` (${operation.operationId}).`]
      .filter(Boolean)
      .join('\n\n');
    const oneLine = `${signature.join(', ')}`;
    const parameters =
      oneLine.length <= 80 ? oneLine : `\n${signature.map((part) => `        ${part},\n`).join('')}    `;
    return `    def ${place.method}(${parameters}) -> ${returns}:\n${docstring(summary, '        ')}${code}`;
  }

  /** The generated names (model classes, TypedDicts) a text uses, for its import line. */
  private namesUsedIn(text: string): string {
    const words = new Set(text.match(/\b[A-Z]\w*\b/g) ?? []);
    return [...this.taken]
      .filter((name) => words.has(name))
      .sort()
      .join(', ');
  }

  generate(): { models: string; resources: string } {
    const resources = this.resources();
    for (const name of Object.keys(this.document.components.schemas)) {
      const schema = this.document.components.schemas[name]!;
      if (schema.type === 'object' && schema.properties && !this.componentModels.has(name)) {
        if (!this.componentParams.has(name) && !this.bodies.has(name))
          this.responseType({ $ref: `#/components/schemas/${name}` }, name);
      }
    }
    const unused = Object.keys(MIXINS).filter((name) => !this.mixed.has(name));
    if (unused.length > 0) throw new Error(`MIXINS names classes the document lacks: ${unused}`);
    const header = `# Generated by \`npm run client:generate\` from docs/openapi/openapi.json (clients/python/generate.ts).\n# Do not edit: test/clients/python-package.test.ts fails when this file is stale.\n`;
    const models = `${header}"""The API's objects: a class per response object, a TypedDict per request object."""\n\nfrom __future__ import annotations\n\nfrom typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, TypedDict, Union, cast\n\nfrom ._frames import MarketsFrame\nfrom ._model import Model, ModelList, _list, _map, _optional\n\n\n${[...this.classes, ...this.typedDicts].join('\n\n')}`;
    const imports = `from typing import Any, Dict, Iterator, Literal, Mapping, Optional, Sequence, Tuple, Union, cast\n\nfrom ._model import NOT_GIVEN, NotGiven\nfrom ._transport import BatchResults, Transport\nfrom .models import ${this.namesUsedIn(resources)}\n`;
    return {
      models,
      resources: `${header}"""The API's operations, grouped by resource: \`client.<resource>.<method>(...)\`."""\n\nfrom __future__ import annotations\n\n${imports}\n\n${resources}`,
    };
  }
}

export function pythonSources(document: unknown): { models: string; resources: string } {
  return new Generator(document as Document).generate();
}
