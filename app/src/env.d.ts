// Stylesheets are bundled by esbuild (scripts/build-app.ts); importing one yields nothing.
declare module '*.css' {}

// The catalogs' `embed` sections by language, made by the embed's build (scripts/build-app.ts).
declare module 'statusd:embed-texts' {
  const texts: Record<string, Record<string, Record<string, string>> | undefined>
  export default texts
}
