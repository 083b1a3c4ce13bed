#!/usr/bin/env node
// The CLI runs from the committed bundle so a fresh clone needs no build step.
import '../dist/cli/index.js'
