#!/usr/bin/env node
// The hookbus CLI. tsx loads the TypeScript sources (and policy modules given by path) directly.
import process from "node:process";
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
