#!/usr/bin/env node
// The installed command: the built CLI (`npm run build` makes dist/ in a checkout).
import "../dist/cli/main.js";
