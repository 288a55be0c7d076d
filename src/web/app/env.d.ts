/** Stylesheets are bundled by Bun (imported for their side effect). */
declare module '*.css';
