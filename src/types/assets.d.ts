// Files imported as text or as embedded file paths (Bun import attributes).
declare module '*.sql' {
  const text: string;
  export default text;
}
declare module '*.wasm' {
  const path: string;
  export default path;
}
declare module '*.data' {
  const path: string;
  export default path;
}
declare module '*.tar.gz' {
  const path: string;
  export default path;
}
// The API reference's script and stylesheet (swagger-ui-dist), embedded as files.
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string;
  export default path;
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string;
  export default path;
}
