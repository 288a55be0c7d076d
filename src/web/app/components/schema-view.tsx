import { fieldsOf, type JsonSchema } from '../lib/schema';

/** A schema as a table of fields (name, type, required, description), with the raw JSON folded away. */
export function SchemaView({ schema, title }: { schema: JsonSchema | null; title: string }) {
  if (!schema) return <p class="muted">No {title.toLowerCase()} published.</p>;
  const fields = fieldsOf(schema);
  return (
    <div class="schema">
      {fields && fields.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{title} fields</caption>
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Type</th>
                <th scope="col">Description</th>
              </tr>
            </thead>
            <tbody>
              {fields.map((f) => (
                <tr key={f.name}>
                  <td>
                    <code>{f.name}</code>
                    {f.required && <span class="badge">required</span>}
                  </td>
                  <td>{f.enum ? f.enum.map((v) => JSON.stringify(v)).join(' | ') : f.type}</td>
                  <td>{f.description ?? <span class="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="muted">Type: {String(schema.type ?? 'any')}</p>
      )}
      <details>
        <summary>JSON Schema</summary>
        <pre tabIndex={0}>
          <code>{JSON.stringify(schema, null, 2)}</code>
        </pre>
      </details>
    </div>
  );
}
