// Stylesheets are bundled by esbuild (scripts/build-app.ts); importing one yields nothing.
declare module '*.css' {}
