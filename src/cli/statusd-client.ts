// The client library, @statusd/client (docs/client.md), from its sources in this repository.
// The npm package carries no sources: scripts/build-package.ts writes this module there as the
// library bundled into one file.
export * from '../../packages/client/src/index.ts'
