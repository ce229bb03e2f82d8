#!/usr/bin/env node
// Entry for `npx bwnet` / a global install: load TypeScript through tsx, then run the CLI.
import { register } from 'tsx/esm/api'
register()
await import('./cli.ts')
