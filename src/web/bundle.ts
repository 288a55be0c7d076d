/**
 * The files of an HTML page bundle, for the registry to serve with its own headers (Bun's HTML
 * routes answer every method and take no headers). In the compiled binary Bun has bundled each
 * page already and lists its files (`bundle.files`, read from the binary); from source, the page
 * is bundled here on first use with the same settings (minified, for browsers, chunks at `/`).
 */
import { basename } from 'node:path';
import type { HTMLBundle } from 'bun';

export interface BundledFile {
  body: Blob;
  type: string;
  etag: string;
}

export interface PageFiles {
  /** The page itself. */
  html: BundledFile;
  /** Its scripts and stylesheets by URL path (`/chunk-….js`). */
  assets: ReadonlyMap<string, BundledFile>;
}

const loaded = new Map<string, Promise<PageFiles>>();

/** The files of `bundle`, read or built once per process. */
export function pageFiles(bundle: HTMLBundle): Promise<PageFiles> {
  let files = loaded.get(bundle.index);
  if (!files) {
    files = bundle.files ? Promise.resolve(embedded(bundle.files)) : build(bundle.index);
    // A failed build is not kept: the next request tries again (and reports the failure again).
    files.catch(() => loaded.delete(bundle.index));
    loaded.set(bundle.index, files);
  }
  return files;
}

function embedded(files: NonNullable<HTMLBundle['files']>): PageFiles {
  let html: BundledFile | undefined;
  const assets = new Map<string, BundledFile>();
  for (const file of files) {
    const entry = { body: Bun.file(file.path), type: file.headers['content-type'], etag: `"${file.headers.etag}"` };
    if (file.loader === 'html') html = entry;
    else assets.set(`/${basename(file.path)}`, entry);
  }
  if (!html) throw new Error('the page bundle has no HTML file');
  return { html, assets };
}

async function build(index: string): Promise<PageFiles> {
  const output = await Bun.build({ entrypoints: [index], target: 'browser', minify: true, publicPath: '/' });
  if (!output.success) throw new AggregateError(output.logs, `cannot bundle ${index}`);
  let html: BundledFile | undefined;
  const assets = new Map<string, BundledFile>();
  for (const artifact of output.outputs) {
    const bytes = await artifact.arrayBuffer();
    const entry = { body: new Blob([bytes]), type: artifact.type, etag: `"${Bun.hash(bytes).toString(36)}"` };
    if (artifact.type.startsWith('text/html')) html = entry;
    else assets.set(`/${basename(artifact.path)}`, entry);
  }
  if (!html) throw new Error(`bundling ${index} made no HTML file`);
  return { html, assets };
}
