// The tests' own run identity: a GitHub Actions run of this project's CI must not turn into the
// workflow run (GITHUB_RUN_ID) or run attempt (GITHUB_RUN_ATTEMPT) that aggregates of fixture legs
// are checked against. Tests that need them pass them explicitly.
delete process.env.GITHUB_RUN_ID
delete process.env.GITHUB_RUN_ATTEMPT
